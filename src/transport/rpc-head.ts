// The id of a JSON-RPC call whose body was refused for its size, read from
// the bytes that arrived before the refusal: a client matches replies to
// calls by id, so the refusal carries it whenever the text read so far
// holds the top-level "id" whole.

type Id = string | number | null;

const space = /[ \t\r\n]/;

/** Index just past the string that opens at `i`, or -1 when the text ends first. */
function pastString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/** Index just past the value that starts at `i` (any JSON value), or -1 when the text ends first. */
function pastValue(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j]!;
    if (c === '"') {
      j = pastString(text, j);
      if (j === -1) return -1;
      if (depth === 0) return j;
      j--;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
      if (depth < 0) return j;
    } else if (depth === 0 && (c === ',' || space.test(c))) return j;
  }
  return -1;
}

const skipSpace = (text: string, i: number): number => {
  while (i < text.length && space.test(text[i]!)) i++;
  return i;
};

/** The top-level "id" of a single call whose text may be cut anywhere; null when it cannot be read. */
export function idFromHead(head: Buffer): Id {
  const text = head.toString('utf8');
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return null;
  i++;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] !== '"') return null;
    const keyEnd = pastString(text, i);
    if (keyEnd === -1) return null;
    let key: unknown;
    try {
      key = JSON.parse(text.slice(i, keyEnd));
    } catch {
      return null;
    }
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return null;
    i = skipSpace(text, i + 1);
    const end = pastValue(text, i);
    if (end === -1) return null;
    if (key === 'id') {
      try {
        const id = JSON.parse(text.slice(i, end)) as unknown;
        return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
      } catch {
        return null;
      }
    }
    i = skipSpace(text, end);
    if (text[i] !== ',') return null;
    i++;
  }
}
