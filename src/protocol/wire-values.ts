// Parsing of the protocol's scalar conventions: integers may arrive as JSON
// numbers or as strings of 1-15 digits; times are ISO-8601 UTC.

/** A whole number sent as a string: 1-15 digits. */
export const digits = /^[0-9]{1,15}$/;

/** A safe non-negative integer, or undefined when the value is not one. */
export function readWholeNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'string' && digits.test(value)) return Number(value);
  return undefined;
}

/** Deepest nesting of objects and arrays a request may carry: beyond it JSON.stringify overflows the stack. */
export const maxNesting = 100;

/**
 * The key path of the first value nested more than `limit` levels deep, or
 * undefined when there is none. Neither walk goes deeper than `limit`, so any
 * parsed body is safe.
 */
export function pathBeyondNesting(value: unknown, limit = maxNesting): string[] | undefined {
  // Every request body is checked, and almost none is too deep: a walk that builds
  // nothing answers that, and only a body found too deep is walked again for the path.
  if (!nestedBeyond(value, limit)) return undefined;
  const stack: Array<{ node: unknown; depth: number; path: string[] }> = [{ node: value, depth: 0, path: [] }];
  while (stack.length > 0) {
    const { node, depth, path } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= limit) return path;
    for (const [key, child] of Object.entries(node)) stack.push({ node: child, depth: depth + 1, path: [...path, key] });
  }
  return undefined;
}

/** Whether `value` holds an object or array `limit` or more levels down; recursion stops at `limit`. */
function nestedBeyond(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (nestedBeyond(child, limit - 1)) return true;
    return false;
  }
  for (const key of Object.keys(value)) if (nestedBeyond((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

let isoMs = Number.NaN;
let isoText = '';
let olderMs = Number.NaN;
let olderText = '';

/**
 * `new Date(ms).toISOString()`, kept for the last two `ms` asked: under load many writes share a
 * millisecond, and a lease change asks for two in turn (the time now and the lease's expiry).
 */
export function isoTime(ms: number): string {
  if (ms === isoMs) return isoText;
  if (ms === olderMs) return olderText;
  olderMs = isoMs;
  olderText = isoText;
  isoText = new Date(ms).toISOString();
  isoMs = ms;
  return isoText;
}

/** What a timestamp a client sends looks like (at most 64 characters), before Date.parse reads it. */
export const timestampShape = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Normalises a client-supplied timestamp, or undefined when it is not one. */
export function readTimestamp(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  if (!timestampShape.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
