import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { compileScript } from '../../src/sdk/script/compile.ts';
import { runInSandbox, type SandboxOutcome } from '../../src/sdk/script/sandbox.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { until } from '../support/until.ts';
import { lastJson, makeSdkProject, repoRoot, type SdkProject, vigil } from './helpers.ts';

// Each test runs the real CLI several times; on a loaded machine one start takes seconds.
vi.setConfig({ testTimeout: 300_000 });

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('vigil script run', () => {
  it('runs a TypeScript script with frozen vars and the workspace, printing its return value as JSON on the last line', async () => {
    project.script(
      'hello.ts',
      `interface Out { greeting: string; n: number }
const out: Out = { greeting: 'hi ' + sdk.vars.WHO, n: Number(sdk.vars.N) + 1 };
console.log('working in', sdk.workspace.path);
let frozen = false;
try { (sdk.vars as Record<string, string>).WHO = 'x'; } catch (e) { frozen = e instanceof TypeError; }
return { ...out, frozen, who: sdk.vars.WHO, ws: sdk.workspace.path };`,
    );
    const r = await vigil(project, ['script', 'run', 'hello', '--var', 'WHO=you', '--var', 'N=41']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`working in ${project.root}`);
    expect(lastJson(r)).toEqual({ greeting: 'hi you', n: 42, frozen: true, who: 'you', ws: project.root });
  });

  it('finds scripts in the user folder and by path; names what it looked for otherwise', async () => {
    project.file('.home/.vigil/scripts/mine.mjs', 'return 7;');
    expect(lastJson(await vigil(project, ['script', 'run', 'mine']))).toBe(7);
    project.file('elsewhere/x.js', 'return sdk.workspace.path;');
    expect(lastJson(await vigil(project, ['script', 'run', 'elsewhere/x.js', '--workspace', 'elsewhere']))).toBe(join(project.root, 'elsewhere'));
    const missing = await vigil(project, ['script', 'run', 'absent']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(join(project.root, '.vigil', 'scripts', 'absent.ts'));
    expect((await vigil(project, ['script', 'run', 'x', '--timeout', 'soon'])).code).toBe(2);
    expect((await vigil(project, ['script', 'run', 'x', '--var', 'no-equals'])).code).toBe(2);
  });

  it('gives a script no process, require, fetch, timers or modules: each attempt is a clear SANDBOX_VIOLATION', async () => {
    const marker = join(project.root, 'escaped');
    project.script(
      'escape.js',
      `const seen = [];
for (const attempt of [
  () => process.exit(3),
  () => require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'),
  () => fetch('http://127.0.0.1:1/'),
  () => setTimeout(() => {}, 1),
  () => Buffer.from('x'),
  () => (function () { return this; })().process.exit(4),
  () => Function('return process')().exit(5),
]) {
  try { attempt(); seen.push('escaped'); } catch (e) { seen.push(e.code || e.name + ': ' + e.message); }
}
return seen;`,
    );
    const r = await vigil(project, ['script', 'run', 'escape']);
    expect(r.code, r.stderr).toBe(0);
    const seen = lastJson(r) as string[];
    expect(seen.slice(0, 5)).toEqual(Array(5).fill('SANDBOX_VIOLATION'));
    expect(seen).not.toContain('escaped');
    expect(existsSync(marker)).toBe(false);
    project.script('importer.js', `const fs = await import('node:fs'); fs.writeFileSync(${JSON.stringify(marker)}, 'x');`);
    const imp = await vigil(project, ['script', 'run', 'importer']);
    expect(imp.code).toBe(1);
    expect(imp.stderr).toContain('scripts cannot load modules');
    expect(existsSync(marker)).toBe(false);
  });

  it('a thrown error exits 1 with its code and message; a runaway script is stopped with 124; a memory hog is stopped with 1', async () => {
    project.script('throws.js', `sdk.cir.capture('x', { confidence: 1.5 });`);
    const t = await vigil(project, ['script', 'run', 'throws']);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain('INVALID_ARGUMENT: confidence: must be a number from 0.0 to 1.0; got 1.5');
    project.script('spin.js', 'while (true) {}');
    const s = await vigil(project, ['script', 'run', 'spin', '--timeout', '1']);
    expect(s.code).toBe(124);
    expect(s.stderr).toContain('exceeded its timeout of 1 s');
    project.script('hog.js', 'const a = []; while (true) a.push(new Array(100000).fill("x"));');
    const h = await vigil(project, ['script', 'run', 'hog', '--memory', '32']);
    expect(h.code).toBe(1);
    expect(h.stderr).toContain('memory limit');
  });

  // In-process, on a clock the test moves: the cap is a timer rule (the CLI runs the same sandbox above).
  it('caps sleep at 30000 ms silently: a two-minute sleep ends well inside a 90 s timeout', async () => {
    const clock = new ManualClock();
    const started = clock.now();
    const logged: string[] = [];
    const file = join(project.root, 'nap.js');
    let outcome: SandboxOutcome | undefined;
    void runInSandbox({
      code: compileScript('await sleep(120000); await sleep(-5); await sleep("x"); return "awake";', file),
      file,
      manifest: {},
      vars: {},
      workspace: project.root,
      call: () => undefined,
      serverCall: async () => undefined,
      log: (_, line) => logged.push(line),
      timeoutMs: 90_000,
      memoryMb: 64,
      abort: new AbortController(),
      clock,
    }).then((o) => (outcome = o));
    // Time moves to the next timer only once the script waits on one besides the timeout's.
    for (;;) {
      await until('the script to finish or sleep', () => (outcome || clock.pending >= 2 ? true : undefined));
      if (outcome) break;
      await clock.advanceTo(clock.nextDueMs!);
    }
    expect(outcome).toEqual({ kind: 'returned', json: '"awake"' });
    expect(clock.now() - started).toBe(30_000);
    expect(logged).toEqual([]);
  });

  it('calls a real stdio MCP server from .mcp.json: started at its first call only, closed when the script ends', async () => {
    const used = join(project.root, 'used.pid');
    const unused = join(project.root, 'unused.pid');
    const server = join(repoRoot, 'test', 'fakes', 'echo-mcp-server.mjs');
    writeFileSync(
      join(project.root, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          echo: { command: process.execPath, args: [server], env: { MARKER: used } },
          idle: { command: process.execPath, args: [server], env: { MARKER: unused } },
        },
      }),
    );
    project.script(
      'mcp.ts',
      `const started = ${JSON.stringify(used)};
const a = await servers.echo.call('echo', { text: 'ping' });
const b = await servers.echo.call('add', { a: 2, b: 3 });
let unknown = '';
try { await servers.nope.call('echo', {}); } catch (e) { unknown = e.code + ' ' + e.message; }
return { a: a.content[0].text, b: b.content[0].text, unknown };`,
    );
    const r = await vigil(project, ['script', 'run', 'mcp']);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as { a: string; b: string; unknown: string };
    expect(out.a).toBe('echo: ping');
    expect(out.b).toBe('5');
    expect(out.unknown).toContain('MCP_SERVER_UNKNOWN');
    expect(out.unknown).toContain('configured: echo, idle');
    expect(existsSync(unused)).toBe(false);
    const pid = Number(readFileSync(used, 'utf8'));
    for (let i = 0; i < 300 && alive(pid); i += 1) await new Promise((res) => setTimeout(res, 100));
    expect(alive(pid)).toBe(false);
  });
});
