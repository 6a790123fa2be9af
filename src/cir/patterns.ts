// Pattern and contradiction detection over a scope's signals (pure functions).
//
// A pattern is a body that recurs among signals of one type once normalised
// (lower case, numbers, ids and punctuation removed, spaces collapsed). Its
// recurrence_count is the number of distinct runs (sources, and for a source
// that runs again, such as a recipe step, its `run:<id>` tags) that produced
// it, or of signals when they carry no source; strength = 1 − 1/count, so a body
// seen twice has 0.5 (the recipe default threshold) and the strength grows
// towards 1 with every recurrence.
//
// Two signals contradict when they share type and domain and their bodies
// are equal once negation words are removed but differ in negation
// ("tests pass" / "tests do not pass").
import { createHash } from 'node:crypto';
import type { CIRSignal, Pattern } from './types.ts';

export function normaliseBody(body: string): string {
  return body
    .toLowerCase()
    .replace(/\b[0-9a-f]{7,}\b/g, ' ')
    .replace(/\d+/g, ' ')
    .replace(/[^\p{L}\s]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function detectPatterns(signals: CIRSignal[]): Pattern[] {
  const groups = new Map<string, CIRSignal[]>();
  for (const s of signals) {
    const norm = normaliseBody(s.body);
    if (!norm) continue;
    const key = `${s.type}\u0000${norm}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(s);
  }
  const out: Pattern[] = [];
  for (const [key, members] of groups) {
    // A source that runs again (a recipe step, tagged run:<id>) counts once per run.
    const sources = new Set(members.map((m) => (m.source ? `${m.source}\u0000${m.tags?.find((t) => t.startsWith('run:')) ?? ''}` : m.id)));
    const count = sources.size;
    if (count < 2) continue;
    const [type, norm] = key.split('\u0000') as [string, string];
    out.push({
      id: `pat_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`,
      type,
      body: norm,
      recurrence_count: count,
      strength: Math.round((1 - 1 / count) * 1000) / 1000,
      signal_ids: members.map((m) => m.id),
    });
  }
  return out.sort((a, b) => b.strength - a.strength || a.body.localeCompare(b.body));
}

const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nothing', 'without', 'cannot', 'nor', 'neither']);

function negationForm(body: string): { core: string; negated: boolean } {
  const words = body
    .toLowerCase()
    .replace(/n['’]t\b/g, ' not')
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  let negations = 0;
  const core: string[] = [];
  for (const w of words) {
    if (NEGATIONS.has(w)) negations += 1;
    else if (w !== 'do' && w !== 'does' && w !== 'did') core.push(w);
  }
  return { core: core.join(' '), negated: negations % 2 === 1 };
}

/** Pairs of signal ids whose bodies differ only in negation. */
export function detectContradictions(signals: CIRSignal[]): Array<[string, string]> {
  const groups = new Map<string, { pos: string[]; neg: string[] }>();
  for (const s of signals) {
    const { core, negated } = negationForm(s.body);
    if (!core) continue;
    const key = `${s.type}\u0000${s.domain ?? ''}\u0000${core}`;
    const g = groups.get(key) ?? groups.set(key, { pos: [], neg: [] }).get(key)!;
    (negated ? g.neg : g.pos).push(s.id);
  }
  const pairs: Array<[string, string]> = [];
  for (const g of groups.values()) for (const p of g.pos.slice(0, 50)) for (const n of g.neg.slice(0, 50)) pairs.push([p, n]);
  return pairs;
}
