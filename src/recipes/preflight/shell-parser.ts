// The shell parser (mvdan-sh: mvdan/sh compiled to JavaScript by GopherJS,
// 1.5 MB in one file), loaded once per process with V8's code cache that the
// build writes beside the vendored libraries. Compiling the file took about
// 50 ms of CPU, and running its start-up about 45, in every `vigil sequence`
// whose preflight reads shell (a local agent's `run:` lines, a shell step);
// with the cache, about 12 and 35. Where there is no cache (running from src/)
// or it was written for other source or another Node, the file is compiled
// as before: the cache is a saving, never a requirement.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { Syntax } from './shell-words.ts';

/** Written by scripts/build.mjs; absent when running from src/. */
const cacheFile = new URL('../../vendor/mvdan-sh.code-cache', import.meta.url);

interface CacheStamp {
  /** sha256 of the source the cache was made from: V8 itself checks only its length. */
  source: string;
  node: string;
}

let syntax: Syntax | undefined;

/** The shell parser, loaded once. */
export function parser(): Syntax {
  syntax ??= loadParser(cacheFile).syntax;
  return syntax;
}

/** Loads mvdan-sh afresh with the code cache in `file` where it fits; `cached` says whether V8 took it. */
export function loadParser(file: URL | string): { syntax: Syntax; cached: boolean } {
  const cache = readCache(file);
  const { syntax: loaded, script } = load(cache);
  return { syntax: loaded, cached: script.cachedDataRejected === false };
}

/**
 * Compiles and runs mvdan-sh, parses a few lines so that what a first parse needs is compiled too, and
 * writes the code cache to `file` (scripts/build.mjs).
 */
export function writeParserCache(file: URL | string): void {
  const { syntax: built, script, stamp } = load(undefined);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${HOME:-~}, on purpose
  built.NewParser().Parse('f() { cd "$1" && ls -la ${HOME:-~}/x | grep -v y > out.txt 2>&1; }\nfor i in a b; do echo "$i" $(date); done\ncat <<EOF\n$x\nEOF\n', 'warm-up');
  writeFileSync(file, script.createCachedData());
  writeFileSync(stampFile(file), JSON.stringify(stamp));
}

function readCache(file: URL | string): { data: Buffer; stamp: CacheStamp } | undefined {
  try {
    return { data: readFileSync(file), stamp: JSON.parse(readFileSync(stampFile(file), 'utf8')) as CacheStamp };
  } catch {
    return undefined;
  }
}

function load(cache: { data: Buffer; stamp: CacheStamp } | undefined): { syntax: Syntax; script: Script; stamp: CacheStamp } {
  const require = createRequire(import.meta.url);
  const file = require.resolve('mvdan-sh');
  const source = readFileSync(file, 'utf8');
  const stamp: CacheStamp = { source: createHash('sha256').update(source).digest('hex'), node: process.version };
  const usable = cache !== undefined && cache.stamp.source === stamp.source && cache.stamp.node === stamp.node;
  // The same wrapper CommonJS modules get, so the file runs as it would under require().
  const script = new Script(Module.wrap(source), { filename: file, cachedData: usable ? cache.data : undefined });
  const module = { exports: {} as { syntax: Syntax } };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  return { syntax: module.exports.syntax, script, stamp };
}

function stampFile(file: URL | string): string {
  return `${file instanceof URL ? fileURLToPath(file) : file}.json`;
}
