// A job queued with `vigil dispatch send` (no --wait) is run by the real
// daemon, once, and its result is readable with `vigil dispatch status`. A
// job whose runner was killed is failed as interrupted, not left running.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnChild } from '../support/children.ts';
import { type Running, type Scratch, scratchProject, startDaemon, vigil, vigilBin, waitFor } from './helpers.ts';

let s: Scratch | undefined;
let d: Running | undefined;

afterEach(async () => {
  if (d && d.child.exitCode === null && d.child.signalCode === null) {
    d.child.kill('SIGKILL');
    await d.exited;
  }
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

  it('a job whose runner was killed with -9 reads failed, interrupted, and is not run again', { timeout: 90_000 }, async () => {
    s = scratchProject();
    const plugin = join(s.root, '.vigil', 'plugins', 'holder');
    mkdirSync(plugin, { recursive: true });
    const [started, release, ended] = [join(s.root, 'started.txt'), join(s.root, 'release'), join(s.root, 'ended')];
    // The tool says it started, then works until the test lets it go (after its runner is gone), and says it ended.
    const tool = `echo x >> '${started}'; while [ ! -e '${release}' ]; do sleep 0.05; done; touch '${ended}'; echo '{}'`;
    writeFileSync(join(plugin, 'plugin.json'), JSON.stringify({ name: 'holder', version: '1.0.0', hooks: {}, tools: { hold: { command: tool } } }));
    const job = JSON.parse(vigil(s, ['dispatch', 'send', 'hold', '--json']).stdout) as { id: string };
    const runner = spawnChild(process.execPath, [vigilBin, 'dispatch', 'run'], { cwd: s.root, env: s.env, stdio: 'ignore' });
    try {
      await waitFor('the tool to start', () => s!.read('started.txt') !== '');
      expect(JSON.parse(vigil(s, ['dispatch', 'status', job.id, '--json']).stdout)).toMatchObject({ status: 'running' });
      const gone = new Promise((r) => runner.once('exit', r));
      runner.kill('SIGKILL');
      await gone;
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
      // Outliving its killed runner, the tool is nobody's child: it is let go and waited for here.
      writeFileSync(release, '');
      await waitFor('the tool to end', () => s!.read('ended') === '' && existsSync(ended));
    }
  });
});
