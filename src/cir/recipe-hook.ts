// The recipe `cir` block, honoured on every recipe type through one seam of
// the step runner:
//   beforeStep  → CIR_CONTEXT: a Markdown file with the scope's latest
//                 `query_limit` signals, patterns of strength ≥
//                 `pattern_min_strength` and open contradictions;
//   afterStep   → with `write_after_step`, the lines `SIGNAL <type>: <body>`
//                 and JSON lines {"signal": {...}} the agent printed, and the
//                 step's output as `step.output`, captured with source
//                 `recipe:<name>/<label>` (embedded when `embed`);
//   complete    → with `detect_patterns_on_complete`, pattern detection.
// The scope is VIGIL_CIR_SCOPE of the run (compound runs set run:<id>).
// A CIR failure is reported, never fatal to the step.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecipeCir } from '../recipes/types.ts';
import { openCir } from './open.ts';
import type { CaptureInput } from './types.ts';

export interface CirRunHook {
  beforeStep(label: string): Record<string, string>;
  afterStep(label: string, output: string): void;
  complete(): void;
}

const MAX_OUTPUT = 60_000;

export function parseSignalLines(output: string): CaptureInput[] {
  const found: CaptureInput[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    const text = /^SIGNAL\s+([A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}):\s*(.+)$/.exec(line);
    if (text) {
      found.push({ type: text[1]!, body: text[2]! });
      continue;
    }
    if (line.startsWith('{"signal"')) {
      try {
        const s = (JSON.parse(line) as { signal?: CaptureInput }).signal;
        if (s && typeof s.body === 'string' && s.body.trim()) found.push(s);
      } catch {
        // not a signal line after all
      }
    }
  }
  return found;
}

export function cirRunHook(input: {
  projectRoot: string;
  recipeName: string;
  cir: RecipeCir | undefined;
  env: NodeJS.ProcessEnv;
  runDir: string;
  warn: (line: string) => void;
}): CirRunHook | null {
  const cir = input.cir;
  if (!cir) return null;
  const store = () => openCir(input.projectRoot, { env: input.env });
  const guard = <T>(what: string, work: () => T, fallback: T): T => {
    try {
      return work();
    } catch (error) {
      input.warn(`cir: ${what}: ${(error as Error).message}`);
      return fallback;
    }
  };
  return {
    beforeStep(label) {
      return guard<Record<string, string>>(
        'context',
        () => {
          const s = store();
          const signals = s.query({ limit: cir.query_limit ?? 10 });
          const patterns = s.patterns({ minStrength: cir.pattern_min_strength ?? 0.5 });
          const contradictions = s.contradictions();
          const md = [
            `# CIR context (scope ${s.defaultScope})`,
            '',
            `## Latest signals (${signals.length})`,
            ...signals.map((x) => `- [${x.type}] ${x.body.replace(/\s+/g, ' ').slice(0, 500)}${x.source ? ` (${x.source})` : ''}`),
            '',
            `## Patterns (strength ≥ ${cir.pattern_min_strength ?? 0.5})`,
            ...patterns.map((p) => `- [${p.type}] ${p.body} — seen ${p.recurrence_count}×, strength ${p.strength}`),
            '',
            '## Open contradictions',
            ...contradictions.map((c) => `- [${c.type}] ${c.body.replace(/\s+/g, ' ').slice(0, 300)} ↔ ${c.contradicts.join(', ')}`),
            '',
          ].join('\n');
          const dir = join(input.runDir, 'cir');
          mkdirSync(dir, { recursive: true });
          const file = join(dir, `${label}.md`);
          writeFileSync(file, md);
          return { CIR_CONTEXT: file };
        },
        {},
      );
    },
    afterStep(label, output) {
      if (!cir.write_after_step) return;
      guard(
        'write_after_step',
        () => {
          const source = `recipe:${input.recipeName}/${label}`;
          const embed = cir.embed === true;
          const signals = parseSignalLines(output).map((s) => ({ ...s, source: s.source ?? source, embed }));
          const body = output.trim();
          if (body) signals.push({ type: 'step.output', body: body.length > MAX_OUTPUT ? body.slice(-MAX_OUTPUT) : body, source, embed });
          for (const s of signals) {
            try {
              store().capture(s);
            } catch (error) {
              input.warn(`cir: signal "${s.body.slice(0, 60)}" of step ${label} not captured: ${(error as Error).message}`);
            }
          }
        },
        undefined,
      );
    },
    complete() {
      if (cir.detect_patterns_on_complete) guard('detect_patterns_on_complete', () => store().patterns(), []);
    },
  };
}
