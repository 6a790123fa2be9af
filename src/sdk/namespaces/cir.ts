// sdk.cir and `vigil cir …`: one implementation over src/cir. Calls that may
// reach an embeddings provider are async; the script bridge waits for them.
import { join } from 'node:path';
import { emitEvent } from '../../events/channel.ts';
import { type CaptureInput, type CIRSignal, type CIRStats, type Contradiction, openCir, type Pattern, projectEmbedder, type QueryOptions, type SearchOptions } from '../../cir/index.ts';
import { HASHED_MODEL } from '../../cir/embed.ts';
import { checkCapture, checkRelationKind } from '../../cir/validate.ts';
import type { SdkContext } from '../../workspace/context.ts';
import { invalid, type VigilError } from '../../errors/vigil-error.ts';
import { confined } from '../../workspace/confine.ts';

export interface CirTarget {
  global?: boolean;
}

function object<T>(value: T | undefined | null, field: string): T {
  if (value === undefined || value === null) return {} as T;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(field, 'must be an object');
  return value;
}

export function cirNamespace(ctx: SdkContext, target: CirTarget = {}) {
  const store = () => {
    if (target.global !== true) confined(ctx.projectRoot, join('.vigil', 'cir.db'), 'cir.db', 'the project');
    return openCir(ctx.projectRoot, { global: target.global === true, env: ctx.env });
  };
  const embedder = () => projectEmbedder(ctx.projectRoot);

  return {
    async capture(body: string, options?: Omit<CaptureInput, 'body'>): Promise<{ id: string }> {
      const opts = object(options, 'options');
      const e = opts.embed ? embedder() : null;
      const { id } = store().capture({ ...opts, body }, e);
      if (e && e.model !== HASHED_MODEL) await store().embedSignals([id], e);
      return { id };
    },
    query: (options?: QueryOptions): CIRSignal[] => store().query(object(options, 'options')),
    async search(text: string, options?: SearchOptions): Promise<CIRSignal[]> {
      const opts = object(options, 'options');
      const e = embedder();
      const vector = e.model !== HASHED_MODEL && store().stats().embeddings > 0 ? (await e.embed([String(text)]))[0] : undefined;
      return store().search(text, opts, vector);
    },
    relate: (from: string, to: string, kind: string) => store().relate(from, to, checkRelationKind(kind)),
    patterns: (options?: { scope?: string; min_strength?: number; type?: string }): Pattern[] => {
      const opts = object(options, 'options');
      return store().patterns({ scope: opts.scope, minStrength: opts.min_strength, type: opts.type });
    },
    contradictions: (options?: { scope?: string }): Contradiction[] => store().contradictions(object(options, 'options')),
    stats: (options?: { scope?: string }): CIRStats => store().stats(object(options, 'options')),
    /** JSONL text, one signal object per line; all or nothing. Emits training.ingested. */
    async ingest(jsonl: string, options?: { scope?: string; source?: string; embed?: boolean; file?: string }): Promise<{ ingested: number; ids: string[] }> {
      const opts = object(options, 'options');
      if (typeof jsonl !== 'string') throw invalid('jsonl', 'must be text with one JSON signal per line');
      const inputs: CaptureInput[] = [];
      for (const [i, line] of jsonl.split('\n').entries()) {
        if (line.trim() === '') continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch (error) {
          throw invalid(`line ${i + 1}`, `is not valid JSON: ${(error as Error).message}`);
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid(`line ${i + 1}`, 'must be a JSON object with at least "body"');
        const signal = parsed as CaptureInput;
        try {
          checkCapture(signal);
        } catch (error) {
          const v = error as VigilError;
          throw invalid(`line ${i + 1}: ${String(v.details.field)}`, v.message.slice(String(v.details.field).length + 2));
        }
        inputs.push({ ...signal, scope: signal.scope ?? opts.scope, source: signal.source ?? opts.source, embed: signal.embed ?? opts.embed });
      }
      if (inputs.length === 0) throw invalid('jsonl', 'holds no signals');
      const e = inputs.some((s) => s.embed) ? embedder() : null;
      const signals = store().captureMany(inputs, e);
      if (e && e.model !== HASHED_MODEL) await store().embedSignals(signals.filter((_, i) => inputs[i]!.embed).map((s) => s.id), e);
      const ids = signals.map((s) => s.id);
      emitEvent('training.ingested', {
        count: ids.length,
        scopes: [...new Set(signals.map((s) => s.scope))],
        types: [...new Set(signals.map((s) => s.type))],
        ...(opts.file ? { file: opts.file } : {}),
        ids,
      });
      return { ingested: ids.length, ids };
    },
  };
}
