// Whether claude and codex have credentials, asked of the CLIs themselves
// (`claude auth status`, `codex login status`) with the environment a step
// would run with. Used by `vigil health` and before a run's canary: without
// credentials claude prints "Not logged in" and codex retries its
// connection for minutes, so the answer and what to do come first.
import { execFile } from 'node:child_process';

export const CLAUDE_LOGIN_HELP =
  'set ANTHROPIC_API_KEY (in the environment, or from the vault through an `auth:` profile in vigil.yml named by the step\'s "auth"), or run `claude auth login` as the user vigil runs as';
export const CODEX_LOGIN_HELP =
  'run `codex login` as the user vigil runs as (or `printenv OPENAI_API_KEY | codex login --with-api-key`), or set CODEX_API_KEY (in the environment, or from the vault through an `auth:` profile in vigil.yml named by the step\'s "auth")';

export interface AuthStatus {
  /** null: the CLI's answer could not be read (an older CLI, a crash); the run goes on and the canary decides. */
  loggedIn: boolean | null;
  detail: string;
}

function ask(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: 20_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, out: `${stdout}\n${stderr}` });
    });
  });
}

export async function claudeAuthStatus(command: string, env: NodeJS.ProcessEnv): Promise<AuthStatus> {
  const { out } = await ask(command, ['auth', 'status', '--json'], env);
  const json = /\{[\s\S]*\}/.exec(out)?.[0];
  try {
    const status = JSON.parse(json ?? '') as { loggedIn?: unknown; authMethod?: unknown; apiKeySource?: unknown };
    if (typeof status.loggedIn !== 'boolean') throw new Error('no loggedIn');
    if (!status.loggedIn) return { loggedIn: false, detail: `claude is not logged in: ${CLAUDE_LOGIN_HELP}` };
    const how = [status.authMethod, status.apiKeySource].filter((x) => typeof x === 'string').join(', ');
    return { loggedIn: true, detail: `logged in${how ? ` (${how})` : ''}` };
  } catch {
    return { loggedIn: null, detail: `\`claude auth status\` gave no answer vigil can read: ${out.trim().slice(0, 200)}` };
  }
}

export async function codexAuthStatus(command: string, env: NodeJS.ProcessEnv): Promise<AuthStatus> {
  const { code, out } = await ask(command, ['login', 'status'], env);
  const said = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^WARNING\b/.test(l));
  if (code === 0) return { loggedIn: true, detail: said.at(-1) ?? 'logged in' };
  if (said.some((l) => /not logged in/i.test(l))) {
    // codex exec also takes an API key from the environment; `login status` does not count it.
    if (env.CODEX_API_KEY) return { loggedIn: true, detail: 'not logged in, but CODEX_API_KEY is set' };
    return { loggedIn: false, detail: `codex is not logged in: ${CODEX_LOGIN_HELP}` };
  }
  return { loggedIn: null, detail: `\`codex login status\` gave no answer vigil can read: ${said.join(' ').slice(0, 200)}` };
}
