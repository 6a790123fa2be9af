// JSON.parse with an error a person can act on: Node's messages give a byte
// position ("at position 82") or none at all; esbuild's JSON parser names the
// line and column, so a failed parse is parsed again there for the place.
// esbuild is loaded only then: every command that reads a recipe comes here,
// and loading it (and lexing its CommonJS for named exports) cost each about
// 40 ms of CPU: `vigil recipe list` took 0.195 s, 0.155 without it.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';
  constructor(message: string, readonly line?: number, readonly column?: number) {
    super(message);
  }
}

/** Parses JSON text; a syntax error says "line L, column C: what is wrong". */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw located(text, (error as Error).message);
  }
}

/** Past this size the place is not looked for: esbuild's second parse held a 50 MB file several times over. */
const locateUpTo = 1024 * 1024;

function located(text: string, fallback: string): JsonSyntaxError {
  if (text.length > locateUpTo) return new JsonSyntaxError(shortQuotes(fallback));
  try {
    const { transformSync } = require('esbuild') as typeof import('esbuild');
    transformSync(text, { loader: 'json', logLevel: 'silent' });
  } catch (error) {
    const first = (error as { errors?: Array<{ text: string; location: { line: number; column: number } | null }> }).errors?.[0];
    if (first?.location) {
      const { line, column } = first.location;
      return new JsonSyntaxError(`line ${line}, column ${column + 1}: ${shortQuotes(first.text.replace(/ in JSON/, ''))}`, line, column + 1);
    }
  }
  return new JsonSyntaxError(shortQuotes(fallback));
}

/** The parsers quote the token they stopped at whole: in a file of one 50 MB token, the message was 50 MB. */
function shortQuotes(message: string): string {
  return message.replace(/"([^"]{60})[^"]+"/g, '"$1…"');
}
