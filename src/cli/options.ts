// Checks of command-line values, shared by the commands: a bad value is a
// usage error (exit 2) that names the flag and what is allowed.

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function wholeNumberFlag(flag: string, value: unknown, min: number, max: number): number {
  const text = String(value);
  const n = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} takes a whole number from ${min} to ${max}; got "${text}".`);
  }
  return n;
}

export function stringFlag(flag: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (value === true || value === '' || Array.isArray(value)) throw new UsageError(`${flag} needs one value.`);
  return String(value);
}

/** "a,b" or repeated flags → a list of non-empty names. */
export function listFlag(value: unknown): string[] {
  if (value === undefined) return [];
  const values = Array.isArray(value) ? value : [value];
  return values.flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter((s) => s.length > 0);
}

export function oneOfFlag<T extends string>(flag: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  const text = String(value);
  if (!(allowed as readonly string[]).includes(text)) {
    throw new UsageError(`${flag} takes one of ${allowed.join(', ')}; got "${text}".`);
  }
  return text as T;
}
