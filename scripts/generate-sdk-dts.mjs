// `npm run sdk-types`: writes examples/scripts/sdk.d.ts, the types of a
// script's globals, from the SDK namespaces themselves
// (src/sdk/namespaces/index.ts): TypeScript's declaration emit prints each
// namespace's methods with their promises unwrapped (a script calls every sdk
// method synchronously), and the named types they use are copied from the
// emitted declarations of their modules. The globals the sandbox adds itself
// (sdk.vars, sdk.workspace, sdk.VigilError, servers, sleep:
// src/sdk/script/bootstrap.ts) are written here, and the result must compile
// on its own. With --check (part of `npm run lint`) it writes nothing and
// exits 1 when the file is not what it would write.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const target = join(root, 'examples/scripts/sdk.d.ts');

const header = `// Types of the globals a Vigil script sees (docs/sdk.md), for editors:
// put this file next to your scripts or reference it with
// /// <reference path="sdk.d.ts" />. Every sdk call is synchronous.
// Generated from src/sdk/namespaces by \`npm run sdk-types\`: do not edit.
`;

const globals = `interface VigilErrorShape extends Error {
  code: string;
  details: Record<string, unknown>;
}

declare const servers: Record<string, { call(tool: string, args?: Record<string, unknown>): Promise<{ content: Array<{ type: string; text?: string }>; isError?: boolean }> }>;
declare function sleep(ms: number): Promise<void>;
`;

/** The emitted declarations: the entry's `sdk` type, and the .d.ts of every module it reaches. */
function emit(scratch) {
  const entry = join(scratch, 'entry.ts');
  writeFileSync(join(scratch, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(
    entry,
    `import type { namespaceFactories } from ${JSON.stringify(join(root, 'src/sdk/namespaces/index.ts'))};
type Sync<T> = T extends (...args: infer A) => infer R ? (...args: A) => Awaited<R> : T extends object ? { [K in keyof T]: Sync<T[K]> } : T;
type Factories = typeof namespaceFactories;
declare function shape(): { [K in keyof Factories]: Sync<ReturnType<Factories[K]>> };
export const sdk = shape();
`,
  );
  const out = join(scratch, 'out');
  const config = join(scratch, 'tsconfig.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: { declaration: true, emitDeclarationOnly: true, noEmit: false, outDir: out, rootDir: '/', typeRoots: [join(root, 'node_modules/@types')] },
      include: [entry],
    }),
  );
  execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', config], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const declarations = (file) => readFileSync(join(out, relative('/', file).replace(/\.ts$/, '.d.ts')), 'utf8');
  return { sdkType: declarations(entry), declarations };
}

/** The text of the top-level type `name` declared in `text` (without `export`), or undefined. */
function declarationOf(text, name) {
  const start = new RegExp(`^(export )?(declare )?(interface|type) ${name}\\b`, 'm').exec(text);
  if (!start) return undefined;
  let depth = 0;
  let quote;
  for (let i = start.index; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '/' && text[i + 1] === '/') i = text.indexOf('\n', i);
    else if (c === '/' && text[i + 1] === '*') i = text.indexOf('*/', i) + 1;
    else if (c === '"' || c === "'" || c === '`') quote = c;
    else if ('{([<'.includes(c)) depth++;
    else if ('})]>'.includes(c) && text[i - 1] !== '=') {
      depth--;
      if (depth === 0 && c === '}' && start[3] === 'interface') return text.slice(start.index, i + 1).replace(/^export (declare )?/, '');
    } else if (c === ';' && depth === 0) return text.slice(start.index, i + 1).replace(/^export (declare )?/, '');
  }
  throw new Error(`the declaration of ${name} does not end`);
}

/** Where the emitted declarations of `file` take each imported name from. */
function importsOf(text, file) {
  const from = new Map();
  for (const m of text.matchAll(/^import (?:type )?\{([^}]*)\} from "([^"]+)";/gm)) {
    for (const part of m[1].split(',')) {
      const [imported, local = imported] = part.replace(/\btype\b/g, '').trim().split(/\s+as\s+/);
      if (imported) from.set(local.trim(), { file: resolve(file, '..', m[2]), name: imported.trim() });
    }
  }
  return from;
}

export function generate() {
  const scratch = mkdtempSync(join(tmpdir(), 'vigil-sdk-dts-'));
  try {
    const { sdkType, declarations } = emit(scratch);
    const body = /export declare const sdk: ([\s\S]*);\s*$/.exec(sdkType)?.[1];
    if (!body) throw new Error(`no sdk type in the emitted declarations:\n${sdkType}`);
    const wanted = [];
    const seen = new Map();
    const inline = (text) =>
      text.replace(/import\("([^"]+)"(?:, \{ with: \{ "resolution-mode": "import" \} \})?\)\.(\w+)/g, (_m, path, name) => {
        wanted.push({ file: resolve(scratch, path), name });
        return name;
      });
    const shape = inline(body);
    const copied = [];
    while (wanted.length > 0) {
      const { file, name } = wanted.shift();
      const key = `${file}#${name}`;
      const other = seen.get(name);
      if (other === key) continue;
      if (other) throw new Error(`two SDK types are named ${name} (${relative(root, other.split('#')[0])} and ${relative(root, file)}): rename one`);
      seen.set(name, key);
      const text = declarations(file);
      const own = declarationOf(text, name);
      if (!own) {
        const imported = importsOf(text, file).get(name);
        if (!imported) throw new Error(`${name} is not declared in the declarations of ${relative(root, file)}`);
        seen.delete(name);
        wanted.push(imported);
        continue;
      }
      // `(typeof kinds)[number]` of a const array: the const's own type, since scripts have no such const.
      const declaration = inline(own).replace(/\btypeof (\w+)/g, (whole, value) => {
        const declared = new RegExp(`^export declare const ${value}: (.*);$`, 'm').exec(text);
        return declared ? declared[1] : whole;
      });
      copied.push(declaration);
      // Names the declaration uses that its module declares or imports.
      const imports = importsOf(text, file);
      for (const [used] of declaration.matchAll(/\b[A-Za-z_]\w*\b/g)) {
        if (used === name || seen.get(used)) continue;
        if (imports.has(used)) wanted.push(imports.get(used));
        else if (declarationOf(text, used)) wanted.push({ file, name: used });
      }
    }
    // Two spaces an indent, as in the rest of the repository (the emit uses four).
    const reindent = (text) => text.replace(/^(?: {4})+/gm, (lead) => ' '.repeat(lead.length / 2));
    const sdk = shape.replace(
      /^\{\n/,
      `{\n    readonly vars: Readonly<Record<string, string>>;\n    readonly workspace: { readonly path: string };\n    readonly VigilError: new (code: string, message: string, details?: Record<string, unknown>) => VigilErrorShape;\n`,
    );
    const text = `${header}\n${copied.map(reindent).join('\n')}\n${globals}\ndeclare const sdk: ${reindent(sdk)};\n`;
    // It must compile on its own, as an editor reads it next to a script.
    const alone = join(scratch, 'sdk.d.ts');
    writeFileSync(alone, text);
    execFileSync(join(root, 'node_modules/.bin/tsc'), ['--ignoreConfig', '--noEmit', '--strict', '--types', 'node', '--typeRoots', join(root, 'node_modules/@types'), alone], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    return text;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === import.meta.filename) {
  const text = generate();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // Missing counts as out of date.
    }
    if (current !== text) {
      process.stderr.write(`${relative(root, target)} is not what the SDK namespaces declare: run "npm run sdk-types"\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${relative(root, target)}\n`);
  }
}
