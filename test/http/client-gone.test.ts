// A write whose client has gone is not run (issue 43, point 1). A server
// stopped (SIGSTOP) holds a release and a publish in its sockets whose
// clients gave up and closed their connections; when it resumes it reads
// each request and its close together, and runs neither: the lease is still
// held (another subscriber's claim is refused LEASE_HELD) and the publish is
// not in the feed. Without the rule the release ended the lease its client
// believed it still had to settle, on both transports.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { sendAndGiveUp } from '../support/gave-up.ts';
import { startServerProcess, transports } from '../support/server-process.ts';
import { readFeed, vigilType } from './fixtures.ts';

describe.each(transports)('a write whose client has gone, over %s', (transport) => {
  it('is not run when the stopped server resumes', async () => {
    const server = await startServerProcess({ transport });
    try {
      const m = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
      await publish(server.base, m.id, m.ownerToken, { type: 'app.job', subject: 'job' });
      const a = await subscribe(server.base, { monitor: m.id, subscriber: 'worker-a', capabilities: ['act'] }, m.ownerToken);
      const b = await subscribe(server.base, { monitor: m.id, subscriber: 'worker-b', capabilities: ['act'] }, m.ownerToken);
      const claimed = await call(server.base, 'POST', `/subscriptions/${a.id}/leases/claim`, { token: a.token, body: { subject: 'job', lease_duration_seconds: 600 } });
      expect(claimed.status).toBe(201);

      server.child.kill('SIGSTOP');
      try {
        const path = new URL(server.base).pathname;
        await sendAndGiveUp(server.url, 'POST', `${path}/subscriptions/${a.id}/leases/release`, { token: a.token, body: { subject: 'job', reason: 'abandoned' } });
        await sendAndGiveUp(server.url, 'POST', `${path}/monitors/${m.id}/observations`, { token: m.ownerToken, body: { type: 'app.job', subject: 'abandoned-publish' } });
      } finally {
        server.child.kill('SIGCONT');
      }

      const byB = await call(server.base, 'POST', `/subscriptions/${b.id}/leases/claim`, { token: b.token, body: { subject: 'job' } });
      expect(byB.status).toBe(409);
      expect(byB.body.code).toBe('LEASE_HELD');
      const feed = await readFeed(server.base, m.id, m.ownerToken);
      expect(feed.filter((o) => o.subject === 'abandoned-publish')).toEqual([]);
      expect(feed.filter((o) => o.type === vigilType('lease')).map((o) => o.data.payload.action)).not.toContain('release');
    } finally {
      await server.kill();
    }
  });
});
