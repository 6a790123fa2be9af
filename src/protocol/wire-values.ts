// Parsing of the protocol's scalar conventions: integers may arrive as JSON
// numbers or as strings of 1-15 digits; times are ISO-8601 UTC.
import { invalid } from './errors.ts';

const digits = /^[0-9]{1,15}$/;

/** A safe non-negative integer, or undefined when the value is not one. */
export function readWholeNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'string' && digits.test(value)) return Number(value);
  return undefined;
}

export function requireWholeNumber(
  field: string,
  value: unknown,
  range: { min?: number; max?: number } = {},
): number {
  const n = readWholeNumber(value);
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = range;
  if (n === undefined || n < min || n > max) {
    const bounds = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw invalid(`"${field}" must be a whole number ${bounds} (a JSON integer or a string of 1-15 digits); got ${describe(value)}.`, {
      field,
    });
  }
  return n;
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Normalises a client-supplied timestamp, or undefined when it is not one. */
export function readTimestamp(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+)?(Z|[+-]\d{2}:?\d{2})?$/i.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
