// The real claude and codex CLIs without credentials, where they are
// installed (REAL_AGENT_BIN, else /opt/agent-clis/bin; without them skipped
// with a note, or failed under CI=true): `claude auth status` and `codex login status` read as not logged
// in, and a claude step fails saying what to do. Their HOME is the test
// project's, so no real login is seen or written.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeAuthStatus, codexAuthStatus } from '../../src/recipes/preflight/agent-auth.ts';
import { agentCliBin, agentClisFor } from '../support/requirements.ts';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

const bin = agentCliBin;
const installed = agentClisFor('the real agent CLI tests');

let project: Project;
afterEach(() => project?.cleanup());

/** The environment of a user without credentials: the project's HOME, no API keys. */
function noCredentials(p: Project): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: p.home, PATH: `${bin}:${process.env.PATH}` };
  for (const k of Object.keys(env)) if (/^(ANTHROPIC_|CLAUDE_CODE_|OPENAI_|CODEX_)/.test(k)) delete env[k];
  return env;
}

describe.runIf(installed)('the real agent CLIs without credentials', () => {
  it('claude auth status and codex login status read as not logged in, with what to do', async () => {
    project = makeProject({ claude: false });
    const env = noCredentials(project);
    const claude = await claudeAuthStatus(join(bin, 'claude'), env);
    expect(claude).toMatchObject({ loggedIn: false });
    expect(claude.detail).toContain('claude auth login');
    const codex = await codexAuthStatus(join(bin, 'codex'), env);
    expect(codex).toMatchObject({ loggedIn: false });
    expect(codex.detail).toContain('codex login');
    // An API key in the step's environment counts for claude, as claude itself says.
    expect(await claudeAuthStatus(join(bin, 'claude'), { ...env, ANTHROPIC_API_KEY: 'sk-ant-not-a-real-key' })).toMatchObject({ loggedIn: true });
  });

  // The run inherits this process's environment: only without a key of its own is claude not logged in.
  it.runIf(!process.env.ANTHROPIC_API_KEY && !process.env.CLAUDE_CODE_OAUTH_TOKEN)('a claude step without the canary fails with "claude is not logged in" and the way out', async () => {
    project = makeProject({ claude: false });
    project.recipe({ name: 'real', canary: false, steps: [{ label: 'a', backend: 'claude', args: ['-p', 'summarize'] }] });
    const env = noCredentials(project);
    const r = await runVigil(project, ['sequence', 'real'], { PATH: env.PATH! });
    expect(r.code).toBe(1);
    const reason = stepOf(lastRun(project), 'a').reason as string;
    expect(reason).toMatch(/^claude is not logged in \("Not logged in/);
    expect(reason).toContain('set ANTHROPIC_API_KEY');
    expect(reason).not.toContain('(success)');
  });
});
