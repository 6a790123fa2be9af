// `vigil bench fanout` and `vigil bench publish` against a Vigil node, run as
// a user runs them: every acknowledged event reaches every stream exactly
// once, before and after a reconnect storm with Last-Event-ID; a server that
// ignores Last-Event-ID (a proxy that drops the header) is caught replaying
// events the streams had; publishes are acknowledged with seqs of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fault } from '../fakes/broken-proxy.ts';
import { type BrokenServer, startBrokenProxy } from '../fakes/broken-proxy.ts';
import { type ServerProcess, startRestartableServer, startServerProcess } from '../support/server-process.ts';
import { runBench, said } from './run-bench.ts';

/** Streams resume from their ?cursor= (the start) instead of after the last event they had. */
const ignoresLastEventId: Fault = {
  name: 'ignores Last-Event-ID',
  request(req) {
    delete req.headers['last-event-id'];
  },
};

describe('vigil bench fanout and publish against a Vigil node', () => {
  let server: ServerProcess;
  let broken: BrokenServer | undefined;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(async () => {
    await broken?.close();
    await server?.stop();
  });

  it('delivers every event to every stream once, before and after a reconnect storm', async () => {
    const run = await runBench(['fanout', '--base', server.url, '--streams', '60', '--subscriptions', '30', '--rate', '40', '--duration', '3s', '--reconnect-storm', '1500ms', '--pid', String(server.child.pid), '--json']);
    expect(run.code, said(run)).toBe(0);
    const f = run.figures;
    expect(f.streams).toMatchObject({ asked: 60, opened: 60 });
    expect(f.publishes.acknowledged).toBeGreaterThan(40);
    expect(f.deliveries.total).toBe(f.publishes.acknowledged * 60);
    expect(f.lost).toEqual({ before: 0, after: 0 });
    expect(f.duplicated).toEqual({ before: 0, after: 0 });
    expect(f.undelivered).toEqual({ open: 0, away: 0, streamsAway: 0 });
    expect(f.storm.reconnected).toBe(60);
    expect(f.toFirst.n).toBe(f.publishes.acknowledged);
    expect(f.toLast.n).toBe(f.publishes.acknowledged);
    expect(f.toLast.p50).toBeGreaterThanOrEqual(f.toFirst.p50);
    expect(f.serverMemory.pid).toBe(server.child.pid);
    expect(f.serverMemory.afterMB).toBeGreaterThan(0);
  });

  it('catches a server that ignores Last-Event-ID: the storm replays what the streams had', async () => {
    broken = await startBrokenProxy(server.url, ignoresLastEventId);
    const run = await runBench(['fanout', '--base', broken.url, '--streams', '20', '--rate', '40', '--duration', '3s', '--reconnect-storm', '1500ms', '--quiet']);
    expect(run.code, said(run)).toBe(1);
    expect(run.stdout).toMatch(/published before the storm: duplicated\s+[1-9]/);
    expect(run.stdout).toMatch(/DUPLICATED: seq \d+ on stream \d+ \(subscription [\w-]+\), published before the storm, arrived 2 times/);
  });

  it('measures durable publishes, each acknowledged with a seq of its own', async () => {
    // One second of eight connections publishing as fast as they are answered is plenty for the checks below
    // (more than ten acknowledged); a longer run only repeats them.
    const run = await runBench(['publish', '--base', server.url, '--connections', '8', '--duration', '1s', '--json']);
    expect(run.code, said(run)).toBe(0);
    const f = run.figures;
    expect(f.acknowledged).toBeGreaterThan(10);
    expect(f.latency.n).toBe(f.acknowledged);
    expect(f.duplicateSeqs).toBe(0);
    expect(f.refused).toEqual({});
  });

  it('publish: ends the run once its server stops answering, says so and exits 3', async () => {
    const doomed = await startServerProcess();
    try {
      // A minute asked for: the publishers of a dead server would spin on refusals for all of it.
      const run = await runBench(['publish', '--base', doomed.url, '--connections', '4', '--duration', '1m'], {
        onStderr: (text) => {
          if (text.includes('publishing over 4 connections')) void doomed.kill();
        },
      });
      expect(run.code, said(run)).toBe(3);
      expect(run.stdout).toMatch(/warning: the run ended early, at [\d.]+ s: no request was answered after [\d.]+ s/);
      expect(run.stderr).toContain('vigil bench publish: the server stopped answering during the run');
    } finally {
      await doomed.kill();
    }
  });

  it('publish: ends the run, says so and exits 3 when its server comes back without its state', async () => {
    const server = await startRestartableServer();
    try {
      const run = await runBench(['publish', '--base', server.url, '--connections', '4', '--duration', '1m'], {
        onStderr: (text) => {
          if (text.includes('publishing over 4 connections')) void server.restart();
        },
      });
      expect(run.code, said(run)).toBe(3);
      expect(run.stdout).toMatch(/warning: the server lost the run's monitor or subscriptions at [\d.]+ s \(restarted without its state\?\)/);
      expect(run.stderr).toContain('vigil bench publish: the server lost the run');
    } finally {
      await server.kill();
    }
  });

  it('fanout: ends the run once its server stops answering, says so and exits 3', async () => {
    const doomed = await startServerProcess();
    try {
      // A minute of publishing and a minute of drain asked for: neither is waited out for a dead server.
      const run = await runBench(['fanout', '--base', doomed.url, '--streams', '10', '--rate', '50', '--duration', '1m', '--drain', '1m'], {
        onStderr: (text) => {
          if (text.includes('publishing ')) void doomed.kill();
        },
      });
      expect(run.code, said(run)).toBe(3);
      expect(run.stdout).toMatch(/warning: the run ended early, at [\d.]+ s: no request was answered after [\d.]+ s/);
      expect(run.stdout).not.toMatch(/the publisher reached|a longer --drain/);
      expect(run.stderr).toContain('vigil bench fanout: the server stopped answering during the run');
    } finally {
      await doomed.kill();
    }
  });
});
