// Stored observations are JSON text already; replies embed that text as it
// is instead of parsing and re-serialising every row.

const marker = '\u0000raw:';
/** The texts of the RawJson values met by the stringifyReply running now (JSON.stringify is synchronous). */
let collecting: string[] | undefined;

export class RawJson {
  constructor(readonly text: string) {}

  // JSON.stringify calls this only for RawJson values: a replacer function would be
  // called for every key of every reply (it was most of stringifyReply's cost).
  toJSON(): unknown {
    if (!collecting) return { text: this.text };
    collecting.push(this.text);
    return `${marker}${collecting.length - 1}`;
  }
}

/** JSON.stringify that splices RawJson values in as their text. */
export function stringifyReply(value: unknown): string {
  const outer = collecting;
  const raws: string[] = [];
  collecting = raws;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    collecting = outer;
  }
  if (raws.length === 0) return text;
  return text.replace(/"\\u0000raw:(\d+)"/g, (_m, i: string) => raws[Number(i)]!);
}

/** The same value with every RawJson parsed (for doors that need plain objects). */
export function toPlain<T>(value: T): T {
  return JSON.parse(stringifyReply(value)) as T;
}
