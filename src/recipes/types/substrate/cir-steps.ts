// The `cir` block of a recipe (any type; the heart of `substrate`): before
// each step the agent gets CIR_CONTEXT, a Markdown file of the newest (or
// best matching) signals, patterns at or above pattern_min_strength and open
// contradictions; with write_after_step, the lines it printed as
// `SIGNAL <type>: <body>` or `{"signal": {...}}` and the step's output
// (type step.output) are captured with source `recipe:<name>/<label>`, the tag
// `run:<run id>` and the domain of `query` (unless a signal names its own); with
// detect_patterns_on_complete, patterns are detected at the end.
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { openCir, projectEmbedder } from '../../../cir/index.ts';
import type { CaptureInput, CIRSignal, Contradiction, Pattern } from '../../../cir/index.ts';
import type { StepsRecipe, SubstrateQuery } from '../../types.ts';

const SIGNAL_LINE = /^SIGNAL ([A-Za-z0-9_.:-]+):\s*(.+)$/;
const MAX_OUTPUT_SIGNAL = 16_000;

export interface CirStepHooks {
  /** Extra environment for a step (CIR_CONTEXT). */
  before(label: string): Record<string, string>;
  /** Captures what the step printed; returns how many signals were written. */
  after(label: string, succeeded: boolean, output: string): Promise<number>;
  /** Pattern detection at the end of the run, when asked for. */
  complete(): Pattern[] | null;
  close(): void;
}

function markdown(recipe: string, label: string, signals: CIRSignal[], patterns: Pattern[], contradictions: Contradiction[]): string {
  const lines = [`# CIR context for step "${label}" of recipe "${recipe}"`, '', `## Signals (${signals.length})`];
  for (const s of signals) lines.push(`- [${s.type}${s.domain ? `/${s.domain}` : ''}] ${s.body.replace(/\n/g, ' ')}${s.source ? ` — ${s.source}` : ''}${s.created_at ? `, ${s.created_at}` : ''}`);
  lines.push('', `## Patterns (${patterns.length})`);
  for (const p of patterns) lines.push(`- [${p.type}] ${p.body} (strength ${p.strength.toFixed(2)}, seen ${p.recurrence_count} times)`);
  lines.push('', `## Open contradictions (${contradictions.length})`);
  for (const c of contradictions) lines.push(`- [${c.type}] ${c.body} (contradicts ${c.contradicts.join(', ')})`);
  return `${lines.join('\n')}\n`;
}

/** Signals an agent printed: `SIGNAL <type>: <body>` lines and `{"signal": {...}}` JSON lines. */
export function parseSignals(output: string): CaptureInput[] {
  const found: CaptureInput[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    const m = SIGNAL_LINE.exec(line);
    if (m) {
      found.push({ type: m[1]!, body: m[2]!.trim() });
      continue;
    }
    if (!line.startsWith('{') || !line.includes('"signal"')) continue;
    try {
      const doc = JSON.parse(line) as { signal?: unknown };
      if (doc.signal && typeof doc.signal === 'object' && typeof (doc.signal as { body?: unknown }).body === 'string') found.push(doc.signal as CaptureInput);
    } catch {
      // not JSON: ordinary output
    }
  }
  return found;
}

export function cirStepHooks(recipe: StepsRecipe, projectRoot: string, runDir: string): CirStepHooks | null {
  const cfg = recipe.cir;
  if (!cfg && recipe.type !== 'substrate') return null;
  const cir = openCir(projectRoot);
  const query: SubstrateQuery = (recipe.type === 'substrate' ? recipe.query : undefined) ?? {};
  const limit = cfg?.query_limit ?? 10;
  const minStrength = cfg?.pattern_min_strength ?? 0.5;
  const scope = query.scope;
  const runId = basename(runDir);
  return {
    before(label) {
      const signals = query.text
        ? cir.search(query.text, { limit, ...(query.type ? { type: query.type } : {}), ...(query.domain ? { domain: query.domain } : {}), ...(scope ? { scope } : {}) })
        : cir.query({ limit, ...(query.type ? { type: query.type } : {}), ...(query.domain ? { domain: query.domain } : {}), ...(query.since ? { since: query.since } : {}), ...(scope ? { scope } : {}) });
      const patterns = cir.patterns({ minStrength, ...(scope ? { scope } : {}) });
      const contradictions = cir.contradictions(scope ? { scope } : {});
      const file = join(runDir, `cir-context-${label}.md`);
      writeFileSync(file, markdown(recipe.name, label, signals, patterns, contradictions));
      return { CIR_CONTEXT: file };
    },
    async after(label, succeeded, output) {
      if (!cfg?.write_after_step) return 0;
      const source = `recipe:${recipe.name}/${label}`;
      // The run's tag: patterns count the distinct runs of one source that found the same thing.
      const runTag = `run:${runId}`;
      const tagged = (tags: string[] | undefined) => [...(tags ?? []).filter((t) => !t.startsWith('run:')), runTag];
      // The query's domain, so the next run's context (which asks for that domain) sees them.
      const domain = query.domain ? { domain: query.domain } : {};
      const inputs = parseSignals(output).map((s) => ({ ...domain, ...s, source: s.source ?? source, tags: tagged(s.tags), ...(scope && !s.scope ? { scope } : {}) }));
      if (succeeded && output.trim())
        inputs.push({ type: 'step.output', body: output.trim().slice(-MAX_OUTPUT_SIGNAL), source, tags: [runTag], ...domain, ...(scope ? { scope } : {}) });
      const valid: CaptureInput[] = [];
      for (const input of inputs) {
        try {
          cir.captureMany([input]);
          valid.push(input);
        } catch {
          // a malformed signal line (empty body, bad confidence) is skipped, never fatal
        }
      }
      if (cfg.embed && valid.length > 0) {
        const recent = cir.query({ source, limit: valid.length, ...(scope ? { scope } : {}) });
        await cir.embedSignals(recent.map((s) => s.id), projectEmbedder(projectRoot)).catch(() => 0);
      }
      return valid.length;
    },
    complete() {
      if (!cfg?.detect_patterns_on_complete) return null;
      return cir.patterns({ minStrength, ...(scope ? { scope } : {}) });
    },
    close() {
      // openCir caches one store per path; closeAllCir at exit closes it.
    },
  };
}
