// A job queued with `vigil dispatch send` (no --wait) is run by the real
// daemon, once, and its result is readable with `vigil dispatch status`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Running, type Scratch, scratchProject, startDaemon, vigil, waitFor } from './helpers.ts';

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
});
