// A job queued with `vigil dispatch send` (no --wait) is run by the real
// daemon, once, and its result is readable with `vigil dispatch status`. A
// job whose runner was killed is failed as interrupted, not left running.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/file-lock/process-alive.ts';
import { spawnChild } from '../support/children.ts';
import { type Running, type Scratch, scratchProject, startDaemon, stopDaemon, vigil, vigilBin, waitFor } from './helpers.ts';

let s: Scratch | undefined;
let d: Running | undefined;

afterEach(async () => {
  await stopDaemon(d);
  s?.cleanup();
});

describe('vigil daemon runs queued dispatch jobs', () => {
  it('runs a plugin tool queued by dispatch send exactly once', { timeout: 90_000 }, async () => {
    s = scratchProject();
    const plugin = join(s.root, '.vigil', 'plugins', 'shout');
    mkdirSync(plugin, { recursive: true });
    // The tool appends to a file, so a second run of the same job would show.
    const tool = `${process.execPath} -e "let t='';process.stdin.on('data',c=>t+=c).on('end',()=>{require('fs').appendFileSync('${join(s.root, 'ran.txt')}','x');console.log(JSON.stringify({text:JSON.parse(t).text.toUpperCase()}))})"`;
    writeFileSync(join(plugin, 'plugin.json'), JSON.stringify({ name: 'shout', version: '1.0.0', hooks: {}, tools: { upper: { command: tool, description: 'upper-cases text' } } }));

    const sent = vigil(s, ['dispatch', 'send', 'upper', '--params', '{"text":"abc"}', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const job = JSON.parse(sent.stdout) as { id: string; status: string };
    expect(job.status).toBe('queued');

    d = startDaemon(s);
    const done = await waitFor('the job to finish', () => {
      const status = JSON.parse(vigil(s!, ['dispatch', 'status', job.id, '--json']).stdout) as { status: string };
      return status.status === 'succeeded' ? status : null;
    });
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, result: { text: 'ABC' } });
    // A second job after it: once that one is done, a second run of the first would have shown.
    const next = JSON.parse(vigil(s, ['dispatch', 'send', 'upper', '--params', '{"text":"def"}', '--json']).stdout) as { id: string };
    await waitFor('the second job to finish', () => (JSON.parse(vigil(s!, ['dispatch', 'status', next.id, '--json']).stdout) as { status: string }).status === 'succeeded');
    expect(s.read('ran.txt')).toBe('xx');
  });

  it('a job whose runner was killed with -9 reads failed, interrupted, is not run again, and its tool was stopped with it', { timeout: 90_000 }, async () => {
    s = scratchProject();
    const plugin = join(s.root, '.vigil', 'plugins', 'holder');
    mkdirSync(plugin, { recursive: true });
    const [started, pidFile] = [join(s.root, 'started.txt'), join(s.root, 'tool.pid')];
    // The tool says it started and who it is, then works until something stops it.
    const tool = `echo x >> '${started}'; echo $$ > '${pidFile}'; while :; do sleep 0.05; done`;
    writeFileSync(join(plugin, 'plugin.json'), JSON.stringify({ name: 'holder', version: '1.0.0', hooks: {}, tools: { hold: { command: tool } } }));
    const job = JSON.parse(vigil(s, ['dispatch', 'send', 'hold', '--json']).stdout) as { id: string };
    const runner = spawnChild(process.execPath, [vigilBin, 'dispatch', 'run'], { cwd: s.root, env: s.env, stdio: 'ignore' });
    let toolPid = 0;
    try {
      toolPid = await waitFor('the tool to start', () => Number(s!.read('tool.pid').trim()) || undefined);
      expect(JSON.parse(vigil(s, ['dispatch', 'status', job.id, '--json']).stdout)).toMatchObject({ status: 'running' });
      const gone = new Promise((r) => runner.once('exit', r));
      runner.kill('SIGKILL');
      await gone;
      // The tool does not outlive its runner: its group is stopped by the watcher beside it.
      await waitFor('the tool to be stopped with its runner', () => !processAlive(toolPid));
      const read = JSON.parse(vigil(s, ['dispatch', 'status', job.id, '--json']).stdout) as { status: string; error: string; finished_at: string | null };
      expect(read.status).toBe('failed');
      expect(read.error).toBe(
        `interrupted: its runner (pid ${runner.pid}) ended before the job did (killed, or the machine restarted); the tool may have done part of its work. Send the job again to run it again`,
      );
      expect(read.finished_at).not.toBeNull();
      // Not queued again: a runner after it finds nothing to run.
      expect(vigil(s, ['dispatch', 'run']).stdout).toContain('ran 0 queued job(s)');
      expect(s.read('started.txt')).toBe('x\n');
    } finally {
      for (const target of [-toolPid, toolPid]) {
        try {
          if (toolPid > 0) process.kill(target, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
  });

  it('send --wait of a tool that fails exits 1 and says why', async () => {
    s = scratchProject();
    const plugin = join(s.root, '.vigil', 'plugins', 'broken');
    mkdirSync(plugin, { recursive: true });
    writeFileSync(join(plugin, 'plugin.json'), JSON.stringify({ name: 'broken', version: '1.0.0', hooks: {}, tools: { fail: { command: 'echo "no disk left" >&2; exit 3' } } }));
    const r = vigil(s, ['dispatch', 'send', 'fail', '--wait']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^job_\S+ failed\n$/);
    expect(r.stderr).toBe('vigil dispatch: exit 3: no disk left\n');
  });
});
