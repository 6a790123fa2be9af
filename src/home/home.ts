// Where Vigil keeps per-user state: ~/.vigil, or $VIGIL_HOME when set (tests
// and sandboxes point it at a temporary folder so they never touch the real
// one). Created 0700 on first use; secrets live below it.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';

export function vigilHome(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.VIGIL_HOME;
  return override && override.length > 0 ? resolve(override) : join(homedir(), '.vigil');
}

/** The user folder, created with mode 0700 (tightened if it exists looser). */
export function ensureVigilHome(env: NodeJS.ProcessEnv = process.env): string {
  const dir = vigilHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  } catch {
    // not ours to change (a shared mount): the files themselves stay 0600
  }
  return dir;
}

/**
 * A project's own folder under the Vigil home (`projects/<folder>-<hash>`):
 * what Vigil keeps for a project that must never sit in its working tree
 * (server tokens). Keyed by the project's absolute path.
 */
export function projectHome(projectRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const root = resolve(projectRoot);
  const slug = (basename(root).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 24) || 'project').replace(/-+$/, '');
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 12);
  return join(vigilHome(env), 'projects', `${slug}-${hash}`);
}

/** `projectHome`, created with mode 0700 (the Vigil home too). */
export function ensureProjectHome(projectRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  ensureVigilHome(env);
  const dir = projectHome(projectRoot, env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
