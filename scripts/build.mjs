// `npm run build`: compiles src/ to dist/ with tsc and copies the files tsc
// does not emit (JSON Schemas, the piscina worker entry), then stamps the
// build so that bin/vigil.js can tell a fresh dist/ from a stale one.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

const assets = new Set(['.json', '.mjs']);
function copyAssets(dir) {
  for (const entry of readdirSync(dir)) {
    const from = join(dir, entry);
    if (statSync(from).isDirectory()) copyAssets(from);
    else if (assets.has(extname(entry))) cpSync(from, join(dist, relative(src, from)));
  }
}
copyAssets(src);
writeFileSync(join(dist, '.built'), `${new Date().toISOString()}\n`);
process.stdout.write(`built ${relative(process.cwd(), dist) || dist}/\n`);
