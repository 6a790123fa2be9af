// Where the CIR store of a project lives, and one open store per path per
// process (a script's calls and a recipe run share it).
import { join } from 'node:path';
import { vigilHome } from '../home/home.ts';
import { CirStore } from './store.ts';

export function cirPath(projectRoot: string, global = false, env: NodeJS.ProcessEnv = process.env): string {
  return global ? join(vigilHome(env), 'cir.db') : join(projectRoot, '.vigil', 'cir.db');
}

const open = new Map<string, CirStore>();

export function openCir(projectRoot: string, options: { global?: boolean; env?: NodeJS.ProcessEnv } = {}): CirStore {
  const env = options.env ?? process.env;
  const path = cirPath(projectRoot, options.global, env);
  const key = `${path}\u0000${env.VIGIL_CIR_SCOPE ?? ''}`;
  let store = open.get(key);
  if (!store) {
    store = new CirStore(path, env);
    open.set(key, store);
  }
  return store;
}

export function closeAllCir(): void {
  for (const store of open.values()) store.close();
  open.clear();
}
