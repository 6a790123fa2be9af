// `npm run build`: compiles src/ to dist/ with tsc and copies the files tsc
// does not emit (JSON Schemas, the piscina worker entry), bundles the
// many-file dependencies into dist/vendor/, writes the JSON Schema validators
// as code, then stamps the build so that bin/vigil.js can tell a fresh dist/
// from a stale one. The last two make every start of the CLI cheaper.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
await vendor();
await precompileValidators();

/**
 * Dependencies made of hundreds of small modules are bundled into one file each under dist/vendor/,
 * and dist/ imports that file: Node resolves, reads and links every module at every start of the
 * CLI, and kysely alone cost 300 ms of CPU there (40 ms as one file), undici 150 ms. Only what
 * dist/ imports from each is re-exported (undici is CommonJS: its names must be listed).
 */
async function vendor() {
  const { build } = await import('esbuild');
  const vendored = {
    kysely: "export * from 'kysely';",
    undici: "export { Agent, buildConnector, fetch } from 'undici';",
  };
  for (const [name, contents] of Object.entries(vendored)) {
    await build({
      stdin: { contents, resolveDir: root, loader: 'js' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: join(dist, 'vendor', `${name}.js`),
      logLevel: 'warning',
      // CommonJS inside an ES module: its require() of Node's own modules needs a require.
      banner: { js: "import { createRequire as vendorRequire } from 'node:module'; const require = vendorRequire(import.meta.url);" },
    });
  }
  const specifier = new RegExp(`(from\\s*|import\\(\\s*)(['"])(${Object.keys(vendored).join('|')})\\2`, 'g');
  (function rewrite(dir) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join(dist, 'vendor')) rewrite(path);
        continue;
      }
      if (!entry.name.endsWith('.js')) continue;
      const text = readFileSync(path, 'utf8');
      const next = text.replace(specifier, (_, head, quote, name) => {
        const target = relative(dirname(path), join(dist, 'vendor', `${name}.js`));
        return `${head}${quote}${target.startsWith('.') ? target : `./${target}`}${quote}`;
      });
      if (next !== text) writeFileSync(path, next);
    }
  })(dist);
}

/**
 * The recipe types' and vigil.yml's JSON Schemas as validator code beside each schema
 * (src/json/compile-schema.ts loads it): compiling a recipe type's schema took a
 * `vigil sequence` 100-300 ms of CPU at every start; loading its code takes a few.
 */
async function precompileValidators() {
  const require = createRequire(import.meta.url);
  const { Ajv } = require('ajv');
  const standaloneCode = require('ajv/dist/standalone').default;
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  const { validatorOptions, precompiledPath } = await load('json/compile-schema.js');
  const { compile, recipeSchemaFiles, standaloneSchemaFiles } = await load('recipes/loading/recipe-schema.js');
  const fresh = () => new Ajv({ ...validatorOptions, code: { source: true } });
  const write = (schemaFile, ajv, validate) => writeFileSync(precompiledPath(schemaFile), standaloneCode(ajv, validate));
  const types = fresh();
  types.addSchema(require(join(dist, 'recipes/types/common.schema.json')));
  for (const schemaFile of recipeSchemaFiles()) write(schemaFile, types, compile(schemaFile, types));
  // Compiled alone, as lazyValidator does: vigil.yml's, and the types that check more than their schema (temporal, sentinel).
  for (const schemaFile of [join(dist, 'workspace/workspace.schema.json'), ...standaloneSchemaFiles()]) {
    const alone = fresh();
    write(schemaFile, alone, alone.compile(require(schemaFile)));
  }
}

writeFileSync(join(dist, '.built'), `${new Date().toISOString()}\n`);
process.stdout.write(`built ${relative(process.cwd(), dist) || dist}/\n`);
