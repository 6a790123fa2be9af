// Reading results out of an agent's output: the JSON objects in free text
// (a judge's verdict, a score object) and the last `SCORE: <n>` line.

/** Every top-level JSON object found in `text`, in order. */
export function jsonObjectsIn(text: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf('{', i);
    if (start < 0) break;
    const end = matchingBrace(text, start);
    if (end > 0) {
      try {
        const value: unknown = JSON.parse(text.slice(start, end + 1));
        if (value && typeof value === 'object' && !Array.isArray(value)) {
          found.push(value as Record<string, unknown>);
          i = end + 1;
          continue;
        }
      } catch {
        // not JSON: look further
      }
    }
    i = start + 1;
  }
  return found;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth += 1;
    else if (c === '}') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

export interface Verdict {
  winner: 'blue' | 'red' | 'draw';
  reason: string;
  done?: boolean;
  score?: number;
}

/** The judge's verdict: the last JSON object with `winner`; an Error says what is wrong. */
export function parseVerdict(output: string): Verdict | Error {
  const candidates = jsonObjectsIn(output).filter((o) => 'winner' in o);
  const v = candidates.at(-1);
  if (!v) return new Error('no JSON object with "winner" in its output (expected {"winner": "blue"|"red"|"draw", "reason": "…"})');
  if (v.winner !== 'blue' && v.winner !== 'red' && v.winner !== 'draw')
    return new Error(`verdict.winner: ${JSON.stringify(v.winner)} is not allowed; allowed: "blue", "red", "draw"`);
  if (typeof v.reason !== 'string') return new Error(`verdict.reason: must be a string, got ${JSON.stringify(v.reason)}`);
  if (v.done !== undefined && typeof v.done !== 'boolean') return new Error(`verdict.done: must be a boolean, got ${JSON.stringify(v.done)}`);
  if (v.score !== undefined && (typeof v.score !== 'number' || !Number.isFinite(v.score)))
    return new Error(`verdict.score: must be a number, got ${JSON.stringify(v.score)}`);
  return {
    winner: v.winner,
    reason: v.reason,
    ...(v.done !== undefined ? { done: v.done as boolean } : {}),
    ...(v.score !== undefined ? { score: v.score as number } : {}),
  };
}

/**
 * A scorer's score: the last line `SCORE: <number>` anywhere in its output (agents go on writing after it;
 * markdown emphasis around it is allowed), else the last JSON object with a numeric `score`.
 */
export function parseScore(output: string): number | Error {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const m = /^[\s*_`>]*SCORE:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)[\s*_`.]*$/.exec(lines[i]!);
    if (m) return Number(m[1]);
  }
  const withScore = jsonObjectsIn(output).filter((o) => typeof o.score === 'number' && Number.isFinite(o.score));
  if (withScore.length > 0) return withScore.at(-1)!.score as number;
  return new Error('its output has neither a line "SCORE: <number>" nor a JSON object with a numeric "score"');
}

/** Runs `fn(i)` for i in 0..count-1, at most `limit` at once, starting none once `stop()` says so. */
export async function forEachLimited(count: number, limit: number, stop: () => boolean, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count && !stop()) {
      const i = next;
      next += 1;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, lane));
}
