// The shell parser's code cache (src/recipes/preflight/shell-parser.ts): a
// cache written for this source is taken, and one that does not fit (other
// source, damaged data, none at all) is passed over: the parser then compiles
// as before and reads shell the same, so a stale dist/ never changes what the
// preflight finds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { writeParserCache } from '../../src/recipes/preflight/shell-parser.ts';
import { repoRoot } from '../support/cli-entry.ts';

const dir = mkdtempSync(join(tmpdir(), 'vigil-shell-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = 'X="rm -rf /"; for d in a b; do cd "$d" && $X | tee log; done 2>&1\ncat <<EOF | sh\necho ~ $HOME\nEOF\n';

/**
 * Loads the parser with the cache in `file` in a process of its own, as a `vigil` command does (in this
 * process V8 would find the source compiled already and never read the cache), and parses a script.
 * Answers whether V8 took the cache and the node types of the parse, in walk order. tsx keeps no cache in
 * the temporary folder, so nothing is left behind.
 */
function loadElsewhere(file: string): { cached: boolean; shape: string[] } {
  const module = pathToFileURL(join(repoRoot, 'src/recipes/preflight/shell-parser.ts')).href;
  const code = `
    const { loadParser } = await import(${JSON.stringify(module)});
    const { syntax, cached } = loadParser(process.argv[1]);
    const shape = [];
    const script = ${JSON.stringify(script)};
    syntax.Walk(syntax.NewParser().Parse(script, 'snippet'), (node) => { if (node) shape.push(syntax.NodeType(node)); return true; });
    process.stdout.write(JSON.stringify({ cached, shape }));`;
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, file], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, TSX_DISABLE_CACHE: '1' } }));
}

describe('the shell parser code cache', () => {
  const cache = join(dir, 'mvdan-sh.code-cache');
  writeParserCache(cache);
  const uncached = loadElsewhere(join(dir, 'missing'));

  it('is taken when written for this source and this Node, and the parser reads shell the same', () => {
    expect(uncached.cached).toBe(false);
    expect(uncached.shape.length).toBeGreaterThan(20);
    expect(loadElsewhere(cache)).toEqual({ cached: true, shape: uncached.shape });
  });

  it('is passed over when written for other source', () => {
    const other = join(dir, 'other.code-cache');
    writeFileSync(other, readFileSync(cache));
    writeFileSync(`${other}.json`, JSON.stringify({ source: '0'.repeat(64), node: process.version }));
    expect(loadElsewhere(other)).toEqual({ cached: false, shape: uncached.shape });
  });

  it('is passed over when its data is damaged', () => {
    const damaged = join(dir, 'damaged.code-cache');
    writeFileSync(damaged, Buffer.alloc(4096, 7));
    writeFileSync(`${damaged}.json`, readFileSync(`${cache}.json`));
    expect(loadElsewhere(damaged)).toEqual({ cached: false, shape: uncached.shape });
  });
});
