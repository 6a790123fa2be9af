// Issue 42 point 1, as an attacker tries it: variables that arrive from
// outside (an inbound trigger sent with an API key scoped only to triggering
// one monitor, an observation's data.vars, a sandboxed script's
// sdk.sequence.run) are data. They never become environment variables of an
// agent or a command target unless the recipe declares them, names that
// change how a program starts (NODE_OPTIONS, BASH_ENV, …) are never taken
// from outside, and no value is evaluated by a shell on its way in. Each
// hostile value, had it worked, would leave a marker file; a benign declared
// variable still reaches the program.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../bench/lib/sentinel-fleet.ts';
import { call, createMonitor } from '../support/client.ts';
import { spawnChild } from '../support/children.ts';
import { type ServerProcess, startServerProcess, tempDir } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { adminToken, makeKey } from '../cloud/fixtures.ts';
import { makeSdkProject, vigil } from '../sdk/helpers.ts';
import { cliEntry as vigilBin } from '../support/cli-entry.ts';

/** NODE_OPTIONS that runs code in every node program started with it: it writes `marker`. */
const nodeOptionsWriting = (marker: string) =>
  `--import=data:text/javascript,${encodeURIComponent(`import fs from "node:fs"; fs.writeFileSync(${JSON.stringify(marker)}, "pwned")`)}`;

/** A project whose steps run on a custom agent (a node program) that records the environment it saw. */
function agentProject(root: string): { seen: string } {
  const seen = join(root, 'seen.jsonl');
  mkdirSync(join(root, '.vigil', 'recipes'), { recursive: true });
  const agent = join(root, 'agent.mjs');
  writeFileSync(
    agent,
    `#!/usr/bin/env node\nimport { appendFileSync } from 'node:fs';\nlet prompt = '';\nfor await (const c of process.stdin) prompt += c;\nappendFileSync(${JSON.stringify(seen)}, JSON.stringify({ prompt, TAG: process.env.TAG ?? null, EXTRA: process.env.EXTRA ?? null, NODE_OPTIONS: process.env.NODE_OPTIONS ?? null }) + '\\n');\n`,
  );
  chmodSync(agent, 0o755);
  writeFileSync(join(root, 'vigil.yml'), 'default_backend: agent\nproviders:\n  agent:\n    type: custom\n    command: ./agent.mjs\n');
  const recipe = (doc: Record<string, unknown>) => writeFileSync(join(root, '.vigil', 'recipes', `${doc.name}.json`), JSON.stringify(doc, null, 2));
  // TAG is declared (a parameter): it may reach the agent's environment. EXTRA is not.
  recipe({ name: 'build', type: 'sequence', canary: false, parameters: { TAG: { default: 'none' } }, steps: [{ label: 'go', args: ['build $TAG'] }] });
  // A shell step: the prompt is a script, and a variable in it is substituted before it runs.
  recipe({ name: 'shelly', type: 'sequence', canary: false, parameters: { TAG: { default: 'none' } }, steps: [{ label: 'go', backend: 'shell', prompt: 'printf "%s" $TAG > tag.txt' }] });
  return { seen };
}

/** The lines the agent has written whole (the file exists, empty, a moment before its first line lands). */
const seenLines = (seen: string) =>
  existsSync(seen)
    ? readFileSync(seen, 'utf8')
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as Record<string, string | null>)
    : [];

describe('hostile variables from outside', () => {
  const dir = tempDir('vigil-hostile-vars-');
  let server: ServerProcess | undefined;
  let daemon: ChildProcess | undefined;
  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((r) => daemon!.once('exit', r));
      daemon.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (daemon.exitCode === null) daemon.kill('SIGKILL');
    }
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an API key scoped to triggering one monitor cannot run code through a sentinel (recipe and bash command targets)', { timeout: scaled(240_000) }, async () => {
    server = await startServerProcess({ args: [`--allow-admin=${adminToken}`] });
    const builds = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    const deploys = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    // The attacker holds a key that may only trigger these two monitors.
    const key = await makeKey(server.url, 'ci', [builds.id, deploys.id]);
    const root = join(dir, 'project');
    const { seen } = agentProject(root);
    const out = join(dir, 'branch.txt');
    const markers = { node: join(dir, 'node-pwned'), bashEnv: join(dir, 'bash-env-pwned'), ld: join(dir, 'ld-pwned') };
    const sentinel = (doc: Record<string, unknown>) => writeFileSync(join(root, '.vigil', 'recipes', `${doc.name}.json`), JSON.stringify(doc, null, 2));
    sentinel({ name: 'on-build', type: 'sentinel', watch: { monitor: builds.id, base: server.url, token: builds.ownerToken }, mode: 'recipe', target: 'build', notify: 'never' });
    // A bash command target; BRANCH is declared by the recipe's vars, OUT too.
    sentinel({
      name: 'on-deploy',
      type: 'sentinel',
      watch: { monitor: deploys.id, base: server.url, token: deploys.ownerToken },
      mode: 'command',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${VAR:-default} form, on purpose
      target: 'bash -c \'printf "%s|%s" "$BRANCH" "${EXTRA:-unset}" > "$OUT"\'',
      vars: { BRANCH: 'main', OUT: out },
      notify: 'never',
    });
    mkdirSync(join(dir, 'home'), { recursive: true });
    daemon = spawnChild(process.execPath, [vigilBin, 'daemon', '--no-publish'], { cwd: root, env: { ...process.env, HOME: join(dir, 'home') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    daemon.stdout!.on('data', (b: Buffer) => (log += b.toString()));
    daemon.stderr!.on('data', (b: Buffer) => (log += b.toString()));
    await until('both sentinels to subscribe', () => (log.match(/subscribed to/g) ?? []).length >= 2, scaled(60_000));

    const hostile = await call(server.url, 'POST', `/v1/triggers/${builds.id}`, {
      token: key,
      body: { subject: 'b-1', vars: { NODE_OPTIONS: nodeOptionsWriting(markers.node), TAG: 'v1.2', EXTRA: 'from-outside' } },
    });
    expect(hostile.status).toBe(201);
    const bash = await call(server.url, 'POST', `/v1/triggers/${deploys.id}`, {
      token: key,
      body: { subject: 'd-1', vars: { BASH_ENV: `$(touch ${markers.bashEnv})`, LD_PRELOAD: `/nonexistent/$(touch ${markers.ld}).so`, BRANCH: 'release/1.2', EXTRA: 'from-outside' } },
    });
    expect(bash.status).toBe(201);
    const diagnose = (error: Error) => {
      throw new Error(`${error.message}\n${log}`);
    };
    await until('the recipe reaction', () => seenLines(seen).length > 0, scaled(90_000)).catch(diagnose);
    await until('the command reaction', () => existsSync(out) && readFileSync(out, 'utf8').length > 0, scaled(90_000)).catch(diagnose);
    await until('both reactions to be logged', () => (log.match(/→ run \S+ (?:succeeded|failed)/g) ?? []).length >= 2, scaled(60_000)).catch(diagnose);

    // The hostile names did nothing; the declared variables arrived; the undeclared one is not in the environment.
    expect(existsSync(markers.node), 'NODE_OPTIONS from a trigger ran code in the agent').toBe(false);
    expect(existsSync(markers.bashEnv), 'BASH_ENV from a trigger ran code in bash').toBe(false);
    expect(existsSync(markers.ld)).toBe(false);
    const [agent] = seenLines(seen);
    expect(agent).toMatchObject({ prompt: 'build v1.2', TAG: 'v1.2', EXTRA: null, NODE_OPTIONS: null });
    expect(readFileSync(out, 'utf8')).toBe('release/1.2|unset');
    expect(log).toMatch(/sentinel on-build: observation \S+ \(b-1\) → run \S+ succeeded/);
    expect(log).toMatch(/sentinel on-deploy: observation \S+ \(d-1\) → run \S+ succeeded/);
  });

  it('a sandboxed script cannot run code through sdk.sequence.run, and a value it passes is never run by a shell', { timeout: scaled(180_000) }, async () => {
    const project = makeSdkProject();
    try {
      const { seen } = agentProject(project.root);
      const marker = join(project.root, 'script-pwned');
      const shellMarker = join(project.root, 'shell-pwned');
      project.script(
        'escape.mjs',
        `const a = sdk.sequence.run('build', { vars: { NODE_OPTIONS: ${JSON.stringify(nodeOptionsWriting(marker))}, TAG: 'from-script', EXTRA: 'x' } });\n` +
          `const b = sdk.sequence.run('shelly', { vars: { TAG: ${JSON.stringify(`$(touch ${shellMarker})';touch ${shellMarker}'`)} } });\n` +
          'return "done";\n',
      );
      const r = await vigil(project, ['script', 'run', 'escape']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(existsSync(marker), 'NODE_OPTIONS from a script ran code in the agent').toBe(false);
      expect(existsSync(shellMarker), 'a value from a script was run by the shell step').toBe(false);
      expect(seenLines(seen)[0]).toMatchObject({ prompt: 'build from-script', TAG: 'from-script', EXTRA: null, NODE_OPTIONS: null });
      // The shell step got the value as one word of data.
      expect(readFileSync(join(project.root, 'tag.txt'), 'utf8')).toBe(`$(touch ${shellMarker})';touch ${shellMarker}'`);
    } finally {
      project.cleanup();
    }
  });
});
