// A cluster node reading a monitor of many observations (issue 26, point 7):
// node A creates the monitor and holds its timers; PostgreSQL is then given
// `observations` more rows directly (as if written over months), and node B,
// started with a small --replica-budget, reads the monitor: the head page, a
// page from the middle, an event stream from the start, new publishes, and
// the middle page again once the budget dropped the monitor from B's replica.
// B's resident memory is sampled from /proc throughout. Shared by
// test/cluster/bounded-replica.test.ts and bench/replica-memory.ts.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { call, createMonitor, subscribe } from './client.ts';
import { type ServerProcess, startServerProcess, tempDir } from './server-process.ts';
import { scaled } from './time-scale.ts';

export interface BigMonitorRun {
  /** Highest VmRSS of node B seen, in MB. */
  readonly peakRssMB: number;
  /** Node B's VmRSS (MB) once started, before it read anything. */
  readonly idleRssMB: number;
  readonly output: string;
  /** What was read that was not what PostgreSQL holds (empty when every page was right). */
  readonly problems: string[];
  /** Seconds each step took. */
  readonly seconds: Record<string, number>;
  /** Node B's highest VmRSS (MB) in each step. */
  readonly stepRssMB: Record<string, number>;
  /** Replica folders of node B in its TMPDIR: while it ran, and after it stopped. */
  readonly replicaDirs: { running: number; stopped: number };
}

export interface BigMonitorOptions {
  readonly url: string;
  readonly observations: number;
  readonly budgetMB: number;
  /** Observations read from the event stream. */
  readonly streamed: number;
  /** Nodes started here are passed to this (to be killed by the caller's hooks). */
  readonly started: (node: ServerProcess) => void;
}

/** The rendezvous weight ownership.ts gives a node for a monitor (heartbeat.ts `assignee`). */
const weight = (id: string, key: number) => createHash('sha256').update(`${id}\u0000${key}`).digest().readUInt32BE(0);

const rssMB = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
};

export async function readBigMonitor(options: BigMonitorOptions): Promise<BigMonitorRun> {
  const seconds: Record<string, number> = {};
  const stepRssMB: Record<string, number> = {};
  let started = performance.now();
  let stepPeak = 0;
  const step = (name: string) => {
    const now = performance.now();
    seconds[name] = Math.round((now - started) / 100) / 10;
    stepRssMB[name] = Math.round(stepPeak);
    stepPeak = 0;
    started = now;
  };
  const problems: string[] = [];
  const holder = await startServerProcess({ args: ['--store', options.url, '--node-id', 'holder'] });
  options.started(holder);
  const monitor = await createMonitor(holder.base, {});
  const client = new pg.Client({ connectionString: options.url });
  await client.connect();
  let head: number;
  let key: number;
  try {
    ({ key, head } = (await client.query('select key::int, head::int from monitors where id = $1', [monitor.id])).rows[0]);
    // One statement per 100,000 rows: the body is a CloudEvent as the server writes them, smaller.
    const last = head + options.observations;
    for (let from = head + 1; from <= last; from += 100_000) {
      await client.query(
        `insert into observations (mkey, seq, type, subject, actor, tier, origin, horizon, time, source_ref, body)
         select $1, g, 'ai.example.tick', null, 'agent:owner', 'measured', 'system', 'event', '2026-01-01T00:00:00.000Z', null,
           format('{"specversion":"1.0","id":"%s","source":"monitor:%s","type":"ai.example.tick","subject":null,"time":"2026-01-01T00:00:00.000Z","datacontenttype":"application/json","sequence":"%s","tier":"measured","origin":"system","horizon":"event","actor":"agent:owner","data":{"n":%s}}',
             g, $2::text, lpad(g::text, 20, '0'), g)
         from generate_series($3::bigint, $4::bigint) g`,
        [key, monitor.id, from, Math.min(last, from + 99_999)],
      );
    }
    // The monitor's row moves as a commit would move it: its seq counter, its change counter and its stats.
    await client.query(
      `update monitors set head = $2, rev = rev + 1,
         stats = jsonb_set(jsonb_set(stats::jsonb, '{head}', to_jsonb($2::bigint)), '{observations}', to_jsonb($3::bigint))::text
       where key = $1`,
      [key, last, options.observations],
    );
    // As autovacuum would after a bulk load: without statistics the planner sorts the whole range for each page.
    await client.query('analyze observations');
    head = last;
  } finally {
    await client.end();
  }
  step('seed');

  // B must not be assigned the monitor's timers: a monitor whose timers run on a node stays in its replica.
  let readerId = 'reader-0';
  for (let i = 1; weight(readerId, key) > weight('holder', key); i++) readerId = `reader-${i}`;
  const tmp = tempDir('vigil-replica-test-');
  const reader = await startServerProcess({
    args: ['--store', options.url, '--node-id', readerId, '--replica-budget', String(options.budgetMB), '--allow-admin', 'admin-token-of-the-test'],
    env: { TMPDIR: tmp },
  });
  options.started(reader);
  const pid = reader.child.pid!;
  const idle = rssMB(pid);
  let peak = idle;
  const sampler = setInterval(() => {
    try {
      const now = rssMB(pid);
      peak = Math.max(peak, now);
      stepPeak = Math.max(stepPeak, now);
    } catch {
      // The node exited; the run reports it.
    }
  }, 100);
  const replicaDirs = () => readdirSync(tmp).filter((name) => name.startsWith('vigil-replica-')).length;
  try {
    step('start B');

    const sub = await subscribe(reader.base, { monitor: monitor.id, subscriber: 'agent:reader', from: 1 }, monitor.ownerToken);
    // After the first read: the snapshot catches up on every monitor.
    const snapshot = await call(reader.base, 'GET', '/admin/snapshot', { token: 'admin-token-of-the-test' });
    if (snapshot.body?.store?.timer_monitors !== 0) problems.push(`node B runs timers: ${JSON.stringify(snapshot.body?.store)}`);
    // Subscribing recorded itself on the monitor.
    head = (await call(reader.base, 'GET', `/monitors/${monitor.id}`, { token: monitor.ownerToken })).body.head;
    if (head !== options.observations + 2) problems.push(`head ${head} after subscribing (expected ${options.observations + 2})`);
    step('first read on B (catch-up)');
    const page = async (cursor: number, limit: number, label: string) => {
      const reply = await call(reader.base, 'GET', `/subscriptions/${sub.id}/pull?limit=${limit}&cursor=${cursor}`, { token: sub.token });
      const seqs: number[] = (reply.body?.observations ?? []).map((o: { id: string }) => Number(o.id));
      const expected = Array.from({ length: Math.min(limit, head - cursor + 1) }, (_, i) => cursor + i);
      if (reply.status !== 200 || reply.body.head !== head || seqs.join() !== expected.join()) {
        problems.push(`${label}: ${reply.status}, head ${reply.body?.head} (expected ${head}), seqs ${seqs[0]}..${seqs.at(-1)} (${seqs.length}; expected ${expected[0]}..${expected.at(-1)})`);
      }
    };
    await page(head - 2, 3, 'head page');
    const middle = Math.floor(head / 2);
    await page(middle, 500, 'middle page');
    step('pages');

    const streamedSeqs = await streamSeqs(`${reader.base}/subscriptions/${sub.id}/stream`, sub.token, options.streamed);
    const gap = streamedSeqs.findIndex((seq, i) => seq !== i + 1);
    if (gap !== -1 || streamedSeqs.length < options.streamed) problems.push(`stream: ${streamedSeqs.length} observations, seq ${streamedSeqs[gap]} at position ${gap + 1}`);
    step(`stream of ${options.streamed}`);

    for (let i = 0; i < 20; i++) {
      const reply = await call(reader.base, 'POST', `/monitors/${monitor.id}/observations`, { token: monitor.ownerToken, body: { type: 'ai.example.tick', data: { n: i } } });
      if (reply.status !== 201 || reply.body.seq !== head + 1) problems.push(`publish ${i}: ${reply.status} seq ${reply.body?.seq} (expected ${head + 1})`);
      head++;
    }
    await page(head - 19, 20, 'published page');
    step('publish 20');

    // Unused for a while and over the budget: the monitor leaves B's replica, and is read again from PostgreSQL.
    const dropLimit = Date.now() + scaled(30_000);
    while (!/dropped 1 cold monitor/.test(reader.output())) {
      if (Date.now() > dropLimit) {
        problems.push(`node B never dropped the monitor:\n${reader.output()}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    step('until dropped');
    await page(middle, 500, 'middle page after the drop');
    await page(head - 2, 3, 'head page after the drop');
    step('read again after the drop');
    const running = replicaDirs();
    await reader.stop();
    return { output: reader.output(), peakRssMB: Math.round(peak), idleRssMB: Math.round(idle), problems, seconds, stepRssMB, replicaDirs: { running, stopped: replicaDirs() } };
  } finally {
    clearInterval(sampler);
  }
}

/** The seqs of the first `count` observations of an event stream (read as they come: the stream is long). */
async function streamSeqs(url: string, token: string, count: number): Promise<number[]> {
  const seqs: number[] = [];
  const abort = new AbortController();
  const limit = setTimeout(() => abort.abort(), scaled(60_000));
  try {
    const response = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` }, signal: abort.signal });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const blocks = buffer.split('\n\n');
      buffer = blocks.pop()!;
      for (const block of blocks) {
        if (!/^event: observation$/m.test(block)) continue;
        seqs.push(Number(/^id: (\d+)$/m.exec(block)?.[1]));
        if (seqs.length >= count) return seqs;
      }
    }
    return seqs;
  } catch (error) {
    if (abort.signal.aborted) return seqs;
    throw error;
  } finally {
    clearTimeout(limit);
    abort.abort();
  }
}
