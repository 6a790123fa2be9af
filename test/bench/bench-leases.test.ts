// `vigil bench leases` against real servers, run as a user runs it: a Vigil
// node and a small lease server of another make (test/fakes/lease-server.ts),
// healthy and broken. Healthy servers show no violation; a server that grants
// a held subject to a second holder, or accepts a complete after expiry and
// re-grant, is caught (exit 1) with the offending records printed. A few
// seconds of load each.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrokenProxy } from '../fakes/broken-proxy.ts';
import { type LeaseServer, startLeaseServer } from '../fakes/lease-server.ts';
import { type ServerProcess, startRestartableServer, startServerProcess, tempDir } from '../support/server-process.ts';
import { runBench, said } from './run-bench.ts';

/**
 * Contention on few subjects, crashes and stalled holders, a short lease: every rule gets exercised. Two
 * seconds are twice the lease, time enough for crashed holders' subjects to be granted again (a longer run
 * only repeats the same cases, at two cores' worth of CPU). A stalled holder oversleeps its lease by
 * 0.25-0.5 s and one the run's end cuts short within its lease is no stall, so only holds granted in a run's first
 * 0.5-0.75 s of 2 can stall: the run that counts late ends takes 3 s (on a machine at load 20, 2 s
 * gave none twice).
 */
const shape = ['--clients', '16', '--subjects', '6', '--hold', '5ms-40ms', '--lease-seconds', '1', '--crash', '0.08', '--stall', '0.08', '--seed', '7'];
const twoSeconds = [...shape, '--duration', '2s'];

describe('vigil bench leases against a Vigil node', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('measures, sends fencing tokens, and finds no violation', async () => {
    const report = join(tempDir('vigil-bench-report-'), 'r.html');
    const run = await runBench(['leases', '--base', server.url, ...shape, '--duration', '3s', '--json', '--report', report]);
    expect(run.code, said(run)).toBe(0);
    const f = run.figures;
    expect(f.fence).toBe(true);
    expect(f.servers[0].extensions).toContain('leases.fence');
    expect(f.grants.total).toBeGreaterThan(20);
    expect(f.refusals['claim LEASE_HELD']).toBeGreaterThan(0);
    expect(f.duplicates).toBe(0);
    expect(f.lateEndsAccepted).toBe(0);
    expect(f.violations).toEqual([]);
    // Stalled holders came back after their lease and were refused; crashed holders' subjects were granted again.
    expect(f.stalledHolds).toBeGreaterThan(0);
    expect(f.lateEndsRefused).toBeGreaterThan(0);
    // Every refused late end is a stalled holder's, those the run's end cut short past their lease included
    // (they were once counted as no stall, so the figure printed fewer stalls than refusals).
    expect(f.lateEndsRefused).toBeLessThanOrEqual(f.stalledHolds);
    expect(f.reclaim.crashes).toBeGreaterThan(0);
    expect(f.reclaim.reclaimed).toBeGreaterThan(0);
    expect(f.reclaim.p50).toBeGreaterThan(-1000);
    expect(f.latency.claim.n).toBe(f.claims.attempts);
    expect(f.fairness.clients).toBe(16);
    expect(f.client.threadBusy.length).toBeGreaterThan(0);
    // The report is one page that fetches nothing.
    const html = readFileSync(report, 'utf8');
    expect(html).toContain('<svg');
    expect(html).toContain('Lease timeline');
    // The reclaim line counts the crashes the times are over apart from all the crashes (it read "over 74 crashes
    // (73 not granted again)" for 147 crashes, as if 73 of the 74 had not been).
    expect(html).toContain(`over the ${f.reclaim.reclaimed} crashed holds granted again (of ${f.reclaim.crashes} crashes; ${f.reclaim.unreclaimed} not granted again before the end)`);
    expect(html).not.toMatch(/\s(src|href)=["']?(https?:)?\/\//);
    expect(html).not.toContain('<script');
  });

  it('--mode next takes jobs with take-next and completes each with complete-and-take-next, once each', async () => {
    const discover = await (await fetch(`${server.base}/discover`)).json();
    expect(discover.extensions).toContain('leases.next');
    // 100 jobs for 8 clients: a dozen each, about five crashed holders whose jobs lapse and are taken again
    // (it was 300: the same cases three times over).
    const run = await runBench(['leases', '--base', server.url, '--mode', 'next', '--clients', '8', '--subjects', '100', '--lease-seconds', '1', '--crash', '0.05', '--duration', '20s', '--json']);
    expect(run.code, said(run)).toBe(0);
    const f = run.figures;
    expect(f.mode).toBe('next');
    // The backlog drained: every job completed exactly once, mostly by complete-and-take-next.
    expect(f.cycles.complete).toBe(100);
    expect(f.latency['complete+next'].n).toBeGreaterThan(50);
    expect(f.latency['claim next'].n).toBeGreaterThan(0);
    expect(f.duplicates).toBe(0);
    expect(f.lateEndsAccepted).toBe(0);
    expect(f.reclaim.unreclaimed).toBe(0);
  });

  it('--mode next says how many jobs were left when its duration ended the run first, and how to drain them', async () => {
    // Four clients holding each job 10 ms cannot complete 2,000 jobs in the shortest run (100 ms).
    const run = await runBench(['leases', '--base', server.url, '--mode', 'next', '--clients', '4', '--subjects', '2000', '--duration', '100ms', '--quiet']);
    expect(run.code, said(run)).toBe(0);
    expect(run.stdout).toMatch(/\n {2}jobs {6}\d+ of 2,000 completed: the run ended at its duration \(100ms\) first; --cycles 2000 runs until every job is done\n/);
  });

  it('refuses --mode next clearly on a server that does not list leases.next', async () => {
    const fake = await startLeaseServer('none');
    try {
      const run = await runBench(['leases', '--base', fake.url, '--mode', 'next', '--duration', '1s']);
      expect(run.code, said(run)).toBe(3);
      expect(run.stderr).toContain('--mode next');
      expect(run.stderr).toContain('leases.next');
      expect(run.stderr).toContain('--mode named');
    } finally {
      await fake.close();
    }
  });

  it('stops on Ctrl-C and prints the summary of what ran', async () => {
    let sent = false;
    const run = await runBench(['leases', '--base', server.url, '--clients', '4', '--subjects', '4', '--duration', '10m'], {
      onStderr: (text, child) => {
        if (!sent && text.includes('running 4 clients')) {
          sent = true;
          // Let some holds happen first (four clients holding 10 ms each: half a second is dozens).
          setTimeout(() => child.kill('SIGINT'), 500);
        }
      },
    });
    expect(run.code, said(run)).toBe(130);
    expect(run.stdout).toContain('interrupted: figures of what ran');
    expect(run.stdout).toMatch(/claims\s+[\d,]+/);
    expect(run.stdout).toContain('no violation');
  });
});

describe('vigil bench leases whose server stops during the run', () => {
  const killedOnceRunning = (victim: ServerProcess) => (text: string) => {
    if (text.includes('running 8 clients')) void victim.kill();
  };

  it('ends the run once nothing answers, says so and exits 3 when its only server is killed, rather than printing the figures as a result', async () => {
    const server = await startServerProcess();
    try {
      // A minute asked for: the clients of a dead server would spin on refusals for all of it.
      const run = await runBench(['leases', '--base', server.url, '--clients', '8', '--subjects', '8', '--duration', '1m', '--timeout', '2s'], { onStderr: killedOnceRunning(server) });
      expect(run.code, said(run)).toBe(3);
      expect(run.stdout).toMatch(/warning: the run ended early, at [\d.]+ s: no request was answered after [\d.]+ s, and requests kept failing without an answer for 3 s/);
      expect(run.stderr).toContain(`vigil bench leases: the server stopped answering during the run (asked GET /discover after it, ${server.url}/mp/v0 gave no answer (ECONNREFUSED))`);
      expect(run.stdout).toContain('claims');
    } finally {
      await server.kill();
    }
  });

  it('ends the run, says so and exits 3 when its server comes back without its state (the monitor and subscriptions gone), rather than counting refusals for the rest of the run', async () => {
    // In memory, as `npm start` serves: the server started again on the port knows nothing of the run.
    const server = await startRestartableServer();
    try {
      const run = await runBench(['leases', '--base', server.url, '--clients', '8', '--subjects', '8', '--duration', '1m'], {
        onStderr: (text) => {
          if (text.includes('running 8 clients')) void server.restart();
        },
      });
      expect(run.code, said(run)).toBe(3);
      expect(run.stdout).toMatch(/warning: the server lost the run's monitor or subscriptions at [\d.]+ s \(restarted without its state\?\): [\d,]+ requests? (was|were) answered NOT_FOUND, and the run ended there/);
      expect(run.stderr).toMatch(/vigil bench leases: the server lost the run's monitor or subscriptions at [\d.]+ s .*; the figures above are of the run until then/);
      expect(run.stdout).toContain('no violation');
    } finally {
      await server.kill();
    }
  });

  it('warns and keeps exit 0 when one of two bases stops answering and the other still does', async () => {
    const server = await startServerProcess();
    // The second base is a way to the same server that goes away: as a node of a cluster lost mid-run.
    const way = await startBrokenProxy(server.url, { name: 'none' });
    try {
      let closed = false;
      const run = await runBench(['leases', '--base', server.url, '--base', way.url, '--clients', '8', '--subjects', '8', '--duration', '1s', '--timeout', '2s'], {
        onStderr: (text) => {
          if (!closed && text.includes('running 8 clients')) {
            closed = true;
            void way.close();
          }
        },
      });
      expect(run.code, said(run)).toBe(0);
      expect(run.stdout).toContain(`warning: 1 of 2 servers did not answer GET /discover after the run: ${way.url}/mp/v0 gave no answer (ECONNREFUSED)`);
      expect(run.stderr).not.toContain('stopped answering');
    } finally {
      await Promise.all([way.close(), server.kill()]);
    }
  });
});

describe('vigil bench leases against a lease server of another make', () => {
  const servers: LeaseServer[] = [];
  const start = async (...args: Parameters<typeof startLeaseServer>) => {
    const s = await startLeaseServer(...args);
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('finds no violation on a healthy one, and sends no fence to a server that does not list leases.fence', async () => {
    const fake = await start('none');
    const run = await runBench(['leases', '--base', fake.url, ...twoSeconds, '--json']);
    expect(run.code, said(run)).toBe(0);
    expect(run.figures.fence).toBe(false);
    expect(run.figures.duplicates).toBe(0);
    expect(run.figures.lateEndsAccepted).toBe(0);
    expect(fake.fences()).toMatchObject({ with: 0 });
    expect(fake.fences().without).toBeGreaterThan(0);
  });

  it('sends the fence on every renew and end to a server that lists leases.fence', async () => {
    const fake = await start('none', { fence: true });
    const run = await runBench(['leases', '--base', fake.url, ...twoSeconds, '--json']);
    expect(run.code, said(run)).toBe(0);
    expect(run.figures.fence).toBe(true);
    expect(fake.fences()).toMatchObject({ without: 0 });
    expect(fake.fences().with).toBeGreaterThan(0);
  });

  it('--compare runs the same scenario with the same seed against a second server and gives each figure’s ratio', async () => {
    const [first, second] = [await start('none'), await start('double-grant')];
    // One second each: what is compared is the scenario and the seed, and the second server's fault fires
    // on every third claim of a held subject, dozens of times a second with 8 clients on 4 subjects.
    const run = await runBench(['leases', '--base', first.url, '--compare', second.url, '--clients', '8', '--subjects', '4', '--duration', '1s', '--seed', '11', '--json', '--quiet']);
    // The second server broke the one-holder rule: the run as a whole says so.
    expect(run.code, said(run)).toBe(1);
    const { runs, comparison } = run.figures;
    expect(runs.map((r: { seed: number }) => r.seed)).toEqual([11, 11]);
    expect(runs[0].servers[0].root).toBe(`${first.url}/mp/v0`);
    expect(runs[1].servers[0].root).toBe(`${second.url}/mp/v0`);
    expect(runs[0].duplicates).toBe(0);
    expect(runs[1].duplicates).toBeGreaterThan(0);
    const grants = comparison.find((r: { name: string }) => r.name === 'grants per second');
    expect(grants.ratio).toBeCloseTo(grants.second / grants.first, 6);
    expect(comparison.find((r: { name: string }) => r.name === 'duplicates')).toMatchObject({ first: 0, better: 'lower' });
  });

  it('catches a server that grants a held subject to a second holder, and prints both holds', async () => {
    const fake = await start('double-grant');
    // One second: the fault fires on every third claim of a held subject, dozens of times a second here.
    const run = await runBench(['leases', '--base', fake.url, '--clients', '12', '--subjects', '4', '--duration', '1s', '--quiet']);
    expect(fake.faults()).toBeGreaterThan(0);
    expect(run.code, said(run)).toBe(1);
    expect(run.stdout).toMatch(/VIOLATIONS: [\d,]+ duplicates?/);
    const record = run.stdout.slice(run.stdout.indexOf('DUPLICATE on'));
    expect(record).toMatch(/DUPLICATE on "s\d": sub-\w+ was granted "s\d" \(answer at \+[\d.]+ ms\) while sub-\w+ provably held it/);
    expect(record).toMatch(/hold A: holder sub-\w+ \(client \d+\), lease 2000 ms, fence none\n\s+claim sent \+[\d.]+ answered \+[\d.]+ → 201/);
    expect(record).toMatch(/hold B: holder sub-\w+ \(client \d+\)/);
  });

  it('catches a server that accepts a complete after expiry and re-grant, and prints the records', async () => {
    const fake = await start('late-complete');
    // Six clients on three subjects: a third of the holds stall past their lease, and the other clients,
    // claiming again at once on each refusal, take the lapsed subject before the stalled holder ends it
    // (twelve clients only doubled the refused claims, the run's costliest part).
    const run = await runBench(['leases', '--base', fake.url, '--clients', '6', '--subjects', '3', '--lease-seconds', '1', '--stall', '0.3', '--duration', '3s', '--quiet', '--json']);
    expect(run.code, said(run)).toBe(1);
    expect(run.figures.duplicates).toBe(0);
    expect(run.figures.lateEndsAccepted).toBeGreaterThan(0);
    const late = run.figures.violations.find((v: { kind: string }) => v.kind === 'late end accepted');
    expect(late.holds[0].stalled).toBe(true);
    expect(late.holds[0].end.status).toBe(200);
    expect(late.holds[1].grant.answer).toBeLessThan(late.holds[0].end.send);
    expect(late.why).toContain('was accepted although');
  });
});

describe('vigil bench flags on the command line', () => {
  it('refuses a bad value with exit 2, naming the flag and what it takes', async () => {
    const run = await runBench(['leases', '--base', 'http://127.0.0.1:9', '--skew', 'zipf:x']);
    expect(run.code, said(run)).toBe(2);
    expect(run.stderr).toContain('--skew takes uniform, zipf:<s> (an exponent above 0 up to 10, e.g. zipf:1.1) or hot:<fraction>');
  });

  it('says when the server cannot be reached (exit 3)', async () => {
    const run = await runBench(['publish', '--base', 'http://127.0.0.1:9', '--duration', '1s']);
    expect(run.code, said(run)).toBe(3);
    expect(run.stderr).toMatch(/127\.0\.0\.1:9\/mp\/v0\/discover does not answer/);
  });
});
