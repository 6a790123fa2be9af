// Stored observations are JSON text already; replies embed that text as it
// is instead of parsing and re-serialising every row.

export class RawJson {
  constructor(readonly text: string) {}
}

const marker = '\u0000raw:';

/** JSON.stringify that splices RawJson values in as their text. */
export function stringifyReply(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `${marker}${raws.length - 1}`;
    }
    return v;
  });
  if (raws.length === 0) return text;
  return text.replace(/"\\u0000raw:(\d+)"/g, (_m, i: string) => raws[Number(i)]!);
}

/** The same value with every RawJson parsed (for doors that need plain objects). */
export function toPlain<T>(value: T): T {
  return JSON.parse(stringifyReply(value)) as T;
}
