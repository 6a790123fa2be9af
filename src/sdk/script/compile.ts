// A script's body becomes one async function. TypeScript (and JavaScript)
// goes through esbuild to strip types; the body is wrapped first so that
// top-level `await` and `return` both work. Modules are not: a script has
// no import or export (it talks to the world through `sdk` only).
import { transformSync } from 'esbuild';
import { VigilError } from '../../errors/vigil-error.ts';

export const ENTRY = '__vigil_script_main';

const topLevelReturn = /^Top-level return cannot be used/;

/**
 * Parses the body as the user wrote it, so that an error is reported at its
 * own line and column: inside the wrapper an unclosed bracket on line 1 shows
 * up at the wrapper's closing brace. Top-level return is allowed (the body
 * becomes a function) and top-level await is, as in a module.
 */
function checkSyntax(source: string, file: string, loader: 'ts' | 'js'): void {
  // Trailing blank lines trimmed: an unclosed bracket is reported where the text ends.
  try {
    transformSync(source.trimEnd(), { loader, format: 'esm', sourcefile: file, logLevel: 'silent' });
  } catch (error) {
    const errors = ((error as { errors?: Array<{ text: string; location: { line: number; column: number } | null }> }).errors ?? []).filter(
      (e) => !topLevelReturn.test(e.text),
    );
    const first = errors[0];
    if (!first) return;
    const at = first.location ? `:${first.location.line}:${first.location.column + 1}` : '';
    throw new VigilError('INVALID_ARGUMENT', `${file}${at}: syntax error: ${first.text}`, { field: 'script' });
  }
}

export function compileScript(source: string, file: string): string {
  const loader = file.endsWith('.ts') ? 'ts' : 'js';
  if (/^\s*(import\s[^(]|export\s)/m.test(source)) {
    throw new VigilError('INVALID_ARGUMENT', `${file}: scripts cannot use import or export; use the sdk global (sdk.cir, sdk.vault, …), servers and sleep`, {
      field: 'script',
    });
  }
  if (/(^|[^.\w$])import\s*\(/.test(source)) {
    throw new VigilError('SANDBOX_VIOLATION', `${file}: scripts cannot load modules (import()); use the sdk global, servers and sleep`, { field: 'script' });
  }
  checkSyntax(source, file, loader);
  const wrapped = `async function ${ENTRY}(sdk, servers, sleep, console) {\n${source}\n}`;
  // JavaScript runs as written, so error lines match the file; TypeScript is
  // reprinted by esbuild and its lines are esbuild's.
  if (loader === 'js') return wrapped;
  try {
    const out = transformSync(wrapped, {
      loader,
      sourcefile: file,
      target: 'es2022',
      format: 'esm',
      minifyWhitespace: false,
    });
    return out.code;
  } catch (error) {
    // esbuild counts the wrapper's first line: give the line of the file.
    const message = (error as Error).message
      .replace(/^Transform failed with \d+ errors?:\n/, '')
      .replace(/:(\d+):(\d+): /g, (_m, line: string, col: string) => `:${Math.max(1, Number(line) - 1)}:${col}: `);
    throw new VigilError('INVALID_ARGUMENT', `${file}: ${message}`, { field: 'script' });
  }
}
