// The server a client command talks to, the same way for every command:
// --base, else VIGIL_BASE, else `server.base` of the project's vigil.yml,
// else http://127.0.0.1:8130.
import { defaultBase } from '../server-client/server-client.ts';
import { stringFlag } from './options.ts';

export const baseHelp = 'Server to use (default: VIGIL_BASE, then server.base of vigil.yml, then http://127.0.0.1:8130)';

export async function resolveBase(flag: unknown): Promise<string> {
  const given = stringFlag('--base', flag);
  if (given !== undefined) return given;
  // Loaded here: reading vigil.yml pulls in YAML and the schema validator.
  const [{ loadWorkspaceConfig }, { findProjectRoot }] = await Promise.all([
    import('../workspace/workspace-config.ts'),
    import('../workspace/project-root.ts'),
  ]);
  return loadWorkspaceConfig(findProjectRoot(process.cwd())).server?.base ?? defaultBase;
}

/**
 * `--base` of a command whose work happens below the CLI (the SDK, the
 * daemon): given as VIGIL_BASE to everything the command runs.
 */
export function applyBaseFlag(flag: unknown, options: { cloud?: boolean } = {}): void {
  const given = stringFlag('--base', flag);
  if (given === undefined) return;
  process.env.VIGIL_BASE = given;
  // The cloud API's own settings (VIGIL_API_URL, api_url) give way to a --base given to a cloud command.
  if (options.cloud) process.env.VIGIL_API_URL = given;
}
