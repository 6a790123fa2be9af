// Checks of command-line values, shared by the commands: a bad value is a
// usage error (exit 2) that names the flag and what is allowed.
import { ExitCode } from '../errors/exit-codes.ts';

export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = ExitCode.usage;
}

export function wholeNumberFlag(flag: string, value: unknown, min: number, max: number): number {
  const text = String(value);
  const n = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} takes a whole number from ${min} to ${max}; got "${text}".`);
  }
  return n;
}

/** A flag's text value; cac gives a list for `type: [String]` flags (which keeps digits as text), and the last one wins. */
export function stringFlag(flag: string, value: unknown): string | undefined {
  const last = Array.isArray(value) ? value.at(-1) : value;
  if (last === undefined) return undefined;
  // A bare flag reaches us as true, or as "true" once cac's String type has converted it.
  const bare = last === true || last === '' || (last === 'true' && !process.argv.some((a) => a === 'true' || a.endsWith('=true')));
  if (bare) throw new UsageError(`${flag} needs a value.`);
  return String(last);
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

/** Edits that turn `a` into `b`: an insertion, a deletion, a change, or two neighbours swapped (`prot` → `port` is one). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, before[j - 2]! + 1);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}

/** The known name closest to a mistyped one, when one is close enough to be a typo. */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(typed, name);
    if (distance <= Math.max(1, Math.floor(name.length / 3)) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** The known flag closest to a mistyped one (`--vars` → `--var`), when one is close enough to be a typo. */
export function closestFlag(typed: string, known: readonly string[]): string | undefined {
  const flag = closestName(typed.replace(/^-+/, '').replace(/=.*$/, ''), known);
  return flag && `--${flag}`;
}

/** `name=value,...` over known limit names (`defaults` names them and says each default), each a whole number from `min`. */
export function limitPairsFlag<N extends string>(flag: string, value: unknown, defaults: Readonly<Record<N, number>>, min = 1): Partial<Record<N, number>> {
  const out: Partial<Record<N, number>> = {};
  const text = stringFlag(flag, value);
  if (text === undefined) return out;
  const names = Object.keys(defaults) as N[];
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name = '', given = ''] = pair.split('=');
    if (!(names as string[]).includes(name)) throw new UsageError(`${flag}: unknown limit "${name}"; known: ${names.map((n) => `${n} (default ${defaults[n]})`).join(', ')}`);
    out[name as N] = wholeNumberFlag(`${flag} ${name}`, given, min, 1_000_000_000);
  }
  return out;
}

/** How a limits flag is described in help: its names and defaults. */
export const limitPairsHelp = (defaults: Readonly<Record<string, number>>) =>
  Object.entries(defaults)
    .map(([name, value]) => `${name} (${value})`)
    .join(', ');
