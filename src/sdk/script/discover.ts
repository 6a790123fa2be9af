// Finding a script: a path (anything with a "/" or a .ts/.mjs/.js ending),
// else <workspace>/.vigil/scripts/<name>.{ts,mjs,js}, then the same under
// ~/.vigil/scripts (or $VIGIL_HOME/scripts).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { VigilError } from '../../errors/vigil-error.ts';
import { vigilHome } from '../../home/home.ts';

const EXTENSIONS = ['.ts', '.mjs', '.js'];

export function findScript(name: string, workspace: string, cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  if (name.includes('/') || EXTENSIONS.some((e) => name.endsWith(e))) {
    const path = resolve(cwd, name);
    if (existsSync(path) && statSync(path).isFile()) return path;
    throw new VigilError('SCRIPT_NOT_FOUND', `script: no file ${path}`, { tried: [path] });
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
    throw new VigilError('INVALID_ARGUMENT', `name: a script name is letters, digits, "_", "." or "-" (or give a path); got "${name}"`, { field: 'name' });
  }
  const tried: string[] = [];
  for (const dir of [join(workspace, '.vigil', 'scripts'), join(vigilHome(env), 'scripts')]) {
    for (const ext of EXTENSIONS) {
      const path = join(dir, name + ext);
      tried.push(path);
      if (existsSync(path)) return path;
    }
  }
  throw new VigilError('SCRIPT_NOT_FOUND', `script: no script "${name}"; looked for ${tried.join(', ')}`, { tried });
}
