// `npm run build`: compiles src/ to dist/ with tsc and copies the files tsc
// does not emit (JSON Schemas, the piscina worker entry), bundles the
// many-file dependencies into dist/vendor/, writes the JSON Schema validators
// as code, bundles the CLI into dist/bundle/ and the step worker into one
// file, then stamps the build so that bin/vigil.js can tell a fresh dist/ from
// a stale one. The vendoring, the validators and the bundles make every start
// of the CLI and of a recipe run's worker cheaper.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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

/** What every esbuild call here shares: Node's modules, the oldest Node the package runs on. */
const forNode = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' };

await vendor();
await precompileValidators();
await writeShellParserCache();
await bundleCli();
await bundleStepWorker();

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
    // The protocol's validators are compiled where the build did not write them (from sources): 75 files
    // (32 ms of CPU loaded alone). Its code keywords (src/protocol/keywords.ts) use _ and stringify, and
    // the build writes the validators with this copy's standaloneCode.
    ajv: "export { Ajv, _, stringify } from 'ajv'; export { default as standaloneCode } from 'ajv/dist/standalone';",
    // Node is given xstate's CommonJS build (7 files, lexed for their names); bundled, esbuild takes its
    // ES module build: 9.6 ms of CPU to load instead of 20.
    xstate: "export * from 'xstate';",
  };
  // Required where it is read synchronously (vigil.yml, YAML recipes, the starter files), so bundled
  // as CommonJS and only require('yaml') is pointed at it (an ES import of it would be inlined into
  // dist/bundle/, where its require() of Node's modules fails): 74 files took 53 ms of CPU to load at
  // every command that reads vigil.yml, 13 ms as one file.
  const vendoredCommonJs = { yaml: "export { parse, parseAllDocuments, stringify } from 'yaml';" };
  const file = (name) => (name in vendoredCommonJs ? `${name}.cjs` : `${name}.js`);
  for (const [name, contents] of Object.entries({ ...vendored, ...vendoredCommonJs })) {
    const commonJs = name in vendoredCommonJs;
    await build({
      ...forNode,
      stdin: { contents, resolveDir: root, loader: 'js' },
      format: commonJs ? 'cjs' : 'esm',
      outfile: join(dist, 'vendor', file(name)),
      // CommonJS inside an ES module: its require() of Node's own modules needs a require.
      ...(!commonJs && { banner: { js: "import { createRequire as vendorRequire } from 'node:module'; const require = vendorRequire(import.meta.url);" } }),
    });
  }
  const names = (map) => Object.keys(map).join('|');
  // Imports of the ES ones, require() of the CommonJS ones (ajv is also required, as the package).
  const specifier = new RegExp(
    `(from\\s*|import\\(\\s*)(['"])(${names(vendored)})\\2|(require\\(\\s*)(['"])(${names(vendoredCommonJs)})\\5`,
    'g',
  );
  (function rewrite(dir) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join(dist, 'vendor')) rewrite(path);
        continue;
      }
      if (!entry.name.endsWith('.js')) continue;
      const text = readFileSync(path, 'utf8');
      const next = text.replace(specifier, (_, importHead, importQuote, importName, requireHead, requireQuote, requireName) => {
        const [head, quote, name] = importHead !== undefined ? [importHead, importQuote, importName] : [requireHead, requireQuote, requireName];
        const target = relative(dirname(path), join(dist, 'vendor', file(name)));
        return `${head}${quote}${target.startsWith('.') ? target : `./${target}`}${quote}`;
      });
      if (next !== text) writeFileSync(path, next);
    }
  })(dist);
}

/**
 * The recipe types' and vigil.yml's JSON Schemas as validator code beside each schema
 * (src/json/compile-schema.ts loads it): compiling a recipe type's schema took a
 * `vigil sequence` 100-300 ms of CPU at every start; loading its code takes a few. The same for the
 * protocol's request schemas (src/protocol/validate.ts): a server compiled them over its first requests,
 * about 100 ms of CPU.
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
  // The protocol's request schemas, one module exporting each schema's validator by its id.
  // Written by the vendored ajv (dist/vendor/ajv.js) that made them: another copy of ajv would not know its code.
  const { protocolAjv, precompiledValidators } = await load('protocol/validate.js');
  const { standaloneCode: writeCode } = await load('vendor/ajv.js');
  const requests = protocolAjv({ validateSchemas: false, source: true });
  const ids = Object.keys(requests.schemas).filter((id) => !id.startsWith('http'));
  writeFileSync(precompiledValidators, writeCode(requests, Object.fromEntries(ids.map((id) => [id, id]))));
}

/**
 * V8's code cache for the shell parser (mvdan-sh, 1.5 MB), which the preflight loads to read shell:
 * src/recipes/preflight/shell-parser.ts says what it saves and when it is not used.
 */
async function writeShellParserCache() {
  const { writeParserCache } = await import(pathToFileURL(join(dist, 'recipes/preflight/shell-parser.js')).href);
  writeParserCache(join(dist, 'vendor', 'mvdan-sh.code-cache'));
}

/**
 * The CLI and every module of dist/ it imports, as one entry file and shared chunks under dist/bundle/
 * (the commands' lazy imports stay lazy: each is a chunk). Node resolved, read and linked about 500
 * modules at every start: a `vigil serve` needed 0.30-0.32 s of CPU to be ready, 0.24 as a bundle with
 * ajv vendored; a two-step `vigil sequence` 0.44-0.46 s, 0.38-0.40. Packages stay outside (the native ones and piscina
 * find files of their own). A module that finds a file beside itself (schemas, static pages, worker
 * entries, bin/vigil.js) keeps its own place in dist/: its import.meta.url and import.meta.dirname are
 * rewritten to the module's file in dist/, relative to the bundle's, so the bundle works wherever dist/ is.
 */
async function bundleCli() {
  const { build } = await import('esbuild');
  const out = join(dist, 'bundle');
  const ownPlace = {
    name: 'own-place',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, async ({ path }) => {
        const text = await readFile(path, 'utf8');
        if (!text.includes('import.meta.')) return { contents: text, loader: 'js' };
        const url = `new URL(${JSON.stringify(relative(out, path))}, import.meta.url).href`;
        const dir = `bundleFilePath(new URL(${JSON.stringify(`${relative(out, dirname(path)) || '.'}/`)}, import.meta.url))`;
        return { contents: text.replaceAll('import.meta.url', url).replaceAll('import.meta.dirname', dir), loader: 'js' };
      });
    },
  };
  const { metafile } = await build({
    ...forNode,
    entryPoints: [join(dist, 'cli', 'main.js')],
    splitting: true,
    format: 'esm',
    outdir: out,
    chunkNames: '[name]-[hash]',
    packages: 'external',
    plugins: [ownPlace],
    banner: { js: "import { fileURLToPath as bundleFilePath } from 'node:url';" },
    metafile: true,
  });
  checkStartCost(metafile);
}

/**
 * The step worker, bundled over its own compiled file: every recipe run starts a piscina thread that
 * loads it, and the thread resolved, read and linked its 20 modules one by one: 33 ms of CPU per run,
 * 14 as one file. It stays where worker-entry.mjs looks for it. A module that finds a file beside
 * itself would find it beside the worker instead, so the build refuses one (as the CLI's bundle
 * rewrites them, see bundleCli).
 */
async function bundleStepWorker() {
  const { build } = await import('esbuild');
  const worker = join(dist, 'recipes', 'pool', 'step-worker.js');
  const { outputFiles } = await build({
    ...forNode,
    entryPoints: [worker],
    format: 'esm',
    packages: 'external',
    write: false,
    outfile: worker,
  });
  const text = outputFiles[0].text;
  if (text.includes('import.meta')) {
    process.stderr.write('build: a module the step worker loads reads import.meta; bundled, it would point at the worker. Pass the path in the step task instead (scripts/build.mjs, bundleStepWorker).\n');
    process.exit(1);
  }
  writeFileSync(worker, text);
}

/**
 * Every command loads what the CLI's entry imports statically before it runs. The server's
 * machinery (the operation table, the machines, the store, their vendored libraries) is loaded
 * with import() by the commands that need it; one static import of it made every start of
 * `vigil` load 766 KB instead of 272 KB (25 ms of CPU more per command), unnoticed until measured.
 */
function checkStartCost(metafile) {
  const serverOnly = /(^|\/)(machines\/|actors\/|store\/store\.js|service\/(service|operations)\.js|vendor\/(ajv|xstate|kysely)\.js)/;
  const entry = Object.keys(metafile.outputs).find((name) => metafile.outputs[name].entryPoint?.endsWith(join('cli', 'main.js')));
  const loaded = new Set();
  const pending = [entry];
  while (pending.length > 0) {
    const name = pending.pop();
    if (loaded.has(name)) continue;
    loaded.add(name);
    for (const imported of metafile.outputs[name].imports) if (imported.kind === 'import-statement' && metafile.outputs[imported.path]) pending.push(imported.path);
  }
  const found = [...loaded].flatMap((name) => Object.keys(metafile.outputs[name].inputs)).filter((input) => serverOnly.test(input));
  if (found.length === 0) return;
  process.stderr.write(`build: the CLI's entry loads server machinery at every start: ${found.join(', ')}.\nImport it with import() inside the command that needs it (scripts/build.mjs, checkStartCost).\n`);
  process.exit(1);
}

writeFileSync(join(dist, '.built'), `${new Date().toISOString()}\n`);
process.stdout.write(`built ${relative(process.cwd(), dist) || dist}/\n`);
