// The floor of the CPU rows (issue 30, points 1 and 3): the least a server on
// the same uWebSockets.js build and the same SQLite can do per request while
// it keeps Vigil's promise that an acknowledged write is committed (WAL,
// synchronous=NORMAL, a group commit per event-loop turn, the answer after
// COMMIT), and the records the protocol requires of a write: every lease
// change is a `lease` observation and every refused write a `rejected` one
// (§5, §6). Nothing else: a fixed bearer, a body that must be JSON with a
// string `type`, a lease map in memory with its row written through.
//   GET  /mp/v0/discover                                  the same 530-byte reply every time
//   POST /mp/v0/monitors/<id>/observations                one row, answered {observation, seq}
//   POST /mp/v0/subscriptions/<id>/leases/claim|complete  the lease row and its observation,
//                                                         or a refusal recorded, answered 409
// Plain JavaScript, run by node itself: no loader's helpers in the floor.
// It prints "listening <port>" once it listens; its folder goes when it exits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import uws from 'uWebSockets.js';

const token = 'Bearer bare';
const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-bare-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));

const db = new Database(join(dir, 'bare.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('create table observations (seq integer primary key, type text not null, subject text, body text not null)');
db.exec('create table leases (subject text primary key, holder text, expires_ms integer, state text not null)');
const begin = db.prepare('begin');
const commit = db.prepare('commit');
const insertObservation = db.prepare('insert into observations (seq, type, subject, body) values (?, ?, ?, ?)');
const upsertLease = db.prepare(
  'insert into leases (subject, holder, expires_ms, state) values (?, ?, ?, ?) on conflict (subject) do update set holder = excluded.holder, expires_ms = excluded.expires_ms, state = excluded.state',
);

const discover = JSON.stringify({
  protocol: 'monitor-protocol',
  supportedVersions: ['0.1'],
  serverInfo: { name: 'bare', version: '0.1.0' },
  capabilities: { monitors: { publish: true }, feeds: { pull: true, sse: true, mcp: true, http: false }, leases: { delivery_count_limit: 5 }, extensions: { 'ai.vigil/monitors': { version: '0.1' } } },
  limits: { max_limit: 1000, default_limit: 50, max_wait_seconds: 50, max_body_bytes: 1048576, retire_after_mute_seconds_default: 604800, max_page_bytes: 1048576, max_batch_calls: 100, max_batch_reply_bytes: 4194304 },
  ttlMs: 3600000,
});

/** Writes of this turn: applied in one transaction, then every answer is sent. */
let writes = [];
let answers = [];
function afterCommit(write, answer) {
  writes.push(write);
  answers.push(answer);
  if (writes.length === 1) setImmediate(flush);
}
function flush() {
  const [w, a] = [writes, answers];
  writes = [];
  answers = [];
  begin.run();
  for (const write of w) write();
  commit.run();
  for (const answer of a) answer();
}

function reply(res, status, body) {
  if (res.aborted) return;
  res.cork(() => res.writeStatus(status).writeHeader('content-type', 'application/json; charset=utf-8').end(body));
}

/** Reads a JSON body; answers 401 or 400 itself. */
function readJson(res, req, then) {
  const authorized = req.getHeader('authorization') === token;
  res.onAborted(() => {
    res.aborted = true;
  });
  let chunks = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk));
    if (!last) return;
    if (!authorized) return reply(res, '401 Unauthorized', '{"code":"UNAUTHORIZED"}');
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, '400 Bad Request', '{"code":"INVALID"}');
    }
    chunks = undefined;
    then(body);
  });
}

let head = 0;
const leases = new Map();

/** Appends an observation the server writes itself; returns its seq once queued. */
function record(type, subject, payload, answer) {
  const seq = ++head;
  const body = JSON.stringify({ id: String(seq), type, subject, time: new Date().toISOString(), data: { payload } });
  afterCommit(
    () => insertObservation.run(seq, type, subject, body),
    () => answer(seq),
  );
  return seq;
}

const app = uws.App();

app.get('/mp/v0/discover', (res) => {
  res.cork(() => res.writeHeader('content-type', 'application/json; charset=utf-8').end(discover));
});

app.post('/mp/v0/monitors/:id/observations', (res, req) => {
  const monitor = req.getParameter(0);
  readJson(res, req, (item) => {
    if (typeof item?.type !== 'string') return reply(res, '400 Bad Request', '{"code":"INVALID","field":"type"}');
    const seq = ++head;
    const subject = typeof item.subject === 'string' ? item.subject : null;
    const stored = JSON.stringify({ id: String(seq), source: `monitor:${monitor}`, type: item.type, subject, time: new Date().toISOString(), data: item.data ?? null });
    afterCommit(
      () => insertObservation.run(seq, item.type, subject, stored),
      () => reply(res, '201 Created', `{"observation":${stored},"seq":${seq}}`),
    );
  });
});

app.post('/mp/v0/subscriptions/:id/leases/:action', (res, req) => {
  const holder = req.getParameter(0);
  const action = req.getParameter(1);
  readJson(res, req, (body) => {
    if (typeof body?.subject !== 'string') return reply(res, '400 Bad Request', '{"code":"INVALID","field":"subject"}');
    const subject = body.subject;
    const now = Date.now();
    const lease = leases.get(subject);
    const refuse = (code) =>
      record('ai.vigil.monitor.rejected', subject, { code, raw: body }, (seq) =>
        reply(res, '409 Conflict', JSON.stringify({ code, holder: lease?.holder ?? null, rejected_seq: seq })),
      );
    if (action === 'claim') {
      if (lease && lease.state === 'held' && lease.holder !== holder && lease.expiresMs > now) return refuse('LEASE_HELD');
      const next = { holder, expiresMs: now + (body.lease_duration_seconds ?? 300) * 1000, state: 'held' };
      leases.set(subject, next);
      afterCommit(() => upsertLease.run(subject, holder, next.expiresMs, 'held'), () => {});
      return record('ai.vigil.monitor.lease', subject, { action: 'claim', holder }, () =>
        reply(res, '201 Created', JSON.stringify({ lease: { subject, holder, state: 'held' }, expires: new Date(next.expiresMs).toISOString() })),
      );
    }
    if (action === 'complete') {
      if (!lease || lease.holder !== holder || lease.state !== 'held') return refuse('LEASE_LOST');
      lease.state = 'completed';
      lease.holder = null;
      afterCommit(() => upsertLease.run(subject, null, null, 'completed'), () => {});
      return record('ai.vigil.monitor.lease', subject, { action: 'complete', holder }, (seq) =>
        reply(res, '200 OK', JSON.stringify({ ok: true, seq, lease: { subject, holder: null, state: 'completed' } })),
      );
    }
    reply(res, '404 Not Found', '{"code":"NOT_FOUND"}');
  });
});

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end('{"code":"NOT_FOUND"}');
});

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('bare durable server: cannot listen\n');
    process.exit(1);
  }
  process.stdout.write(`listening ${uws.us_socket_local_port(socket)}\n`);
});
