// A signal that follows others for one piece of work, and lets go of them when the work is done: Node 20's
// AbortSignal.any kept every composed signal held by a long-lived source (the MCP door's shutdown signal,
// a live source's), about 1.2 KB per request for as long as the server ran.
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { expect, it, vi } from 'vitest';
import { linkedSignal } from '../../src/timing/linked-signal.ts';
import { repoRoot } from '../support/server-process.ts';

it('aborts with the reason of the first source that aborts', () => {
  const [a, b] = [new AbortController(), new AbortController()];
  const linked = linkedSignal([a.signal, b.signal]);
  const why = new Error('the run was cancelled by SIGINT');
  b.abort(why);
  expect(linked.signal.aborted).toBe(true);
  expect(linked.signal.reason).toBe(why);
  a.abort(new Error('later'));
  expect(linked.signal.reason).toBe(why);
});

it('is aborted at once when a source already is', () => {
  const a = new AbortController();
  a.abort('gone');
  expect(linkedSignal([a.signal], 1000).signal.reason).toBe('gone');
});

it('aborts with a TimeoutError once its time limit passes', () => {
  vi.useFakeTimers();
  try {
    const linked = linkedSignal([], 2000);
    vi.advanceTimersByTime(1999);
    expect(linked.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(linked.signal.reason).toMatchObject({ name: 'TimeoutError', message: 'no answer within 2 s' });
  } finally {
    vi.useRealTimers();
  }
});

it('leaves no listener on a long-lived source once disposed, however many pieces of work it followed', () => {
  const shutdown = new AbortController();
  for (let i = 0; i < 1000; i++) {
    const perRequest = new AbortController();
    const linked = linkedSignal([perRequest.signal, shutdown.signal], 30_000);
    linked.signal.addEventListener('abort', () => {});
    linked.dispose();
  }
  expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  // Disposed work no longer follows its sources.
  const linked = linkedSignal([shutdown.signal]);
  linked.dispose();
  shutdown.abort();
  expect(linked.signal.aborted).toBe(false);
});

it('holds the process until its work ends or times out, and no longer once disposed', () => {
  // Work that holds no handle of its own, as a fetch whose server was killed under it can be left
  // (undici, Node 20): it settles only on the abort. A run waiting on one exited with 13 at once.
  const code = `
    import { linkedSignal } from './src/timing/linked-signal.ts';
    const linked = linkedSignal([], 300);
    await new Promise((resolve) => linked.signal.addEventListener('abort', resolve));
    linked.dispose();
    console.log('settled: ' + linked.signal.reason.name);
    linkedSignal([], 600_000).dispose();
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  expect(child.signal, 'still running after 60 s: a disposed limit held the process').toBeNull();
  expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 0, stdout: 'settled: TimeoutError\n' });
});

