// The dashboard's Statecharts tab (issue 29, point 1) in real Chromium: the
// machines are served as JSON read from the XState machine objects, drawn
// offline (elkjs from this server), and an actor chosen in the Actors tab
// shows its current state and the transition it just took, live. Screenshots
// go to VIGIL_UI_SCREENSHOTS when set (docs/ui/ holds the committed ones).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseMachine } from '../../src/machines/lease-machine.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call, publish } from '../support/client.ts';
import { dashboardInChromium } from '../support/dashboard-browser.ts';
import { chromiumFor } from '../support/requirements.ts';

const haveChromium = chromiumFor('the statechart browser tests');
const admin = 'vga_charts_test_token_0123456789abc';

describe('GET /ui/machines', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ port: 0, cloud: false, allowAdmin: admin, log: () => undefined });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves every machine as read from its XState definition: states, targets, guards and delays', async () => {
    const reply = await fetch(`${server.url}/ui/machines`);
    expect(reply.status).toBe(200);
    const { machines } = (await reply.json()) as { machines: any[] };
    expect(machines.map((m) => m.kind)).toEqual(['monitor', 'subscription', 'lease', 'source']);
    const lease = machines.find((m) => m.kind === 'lease');
    expect(lease.states.map((s: any) => s.key).sort()).toEqual(Object.keys(leaseMachine.root.states).sort());
    expect(lease.transitions).toContainEqual(expect.objectContaining({ from: 'lease.held', to: 'lease.free', event: 'after untilExpiry', delay: 'untilExpiry' }));
    expect(lease.transitions).toContainEqual(expect.objectContaining({ from: 'lease.held', to: 'lease.dead_lettered', event: 'REJECT', guard: 'heldByCaller && lastReject' }));
    expect(lease.transitions).toContainEqual(expect.objectContaining({ from: 'lease.held', to: null, event: 'CLAIM', actions: ['refuseHeld'] }));
    const source = machines.find((m) => m.kind === 'source');
    expect(source.states).toContainEqual(expect.objectContaining({ id: 'source.running.watching', parent: 'source.running' }));
    expect(source.transitions).toContainEqual(expect.objectContaining({ from: 'source.running', to: 'source.backing_off', event: 'error (watch)' }));
  });

  it('refuses a chart target that names no machine, naming the parameter', async () => {
    const reply = await fetch(`${server.url}/ui/events?chart=robot:7`, { headers: { authorization: `Bearer ${admin}` } });
    expect(reply.status).toBe(400);
    expect((await reply.json()).error).toMatch(/chart must be <kind>:<id> with kind one of monitor, subscription, lease, source/);
  });
});

describe.skipIf(!haveChromium)('the Statecharts tab in Chromium', () => {
  const ui = dashboardInChromium(admin, { sources: { kinds: ['http'], minBackoffMs: 200 } });
  let target: Server;

  beforeAll(async () => {
    target = createServer((_req, res) => res.end('healthy'));
    await new Promise<void>((d) => target.listen(0, '127.0.0.1', d));
  });
  afterAll(async () => {
    target?.closeAllConnections();
    await new Promise((d) => target?.close(d));
  });

  it('opens a lease actor from the Actors tab with the keyboard and follows its transitions live', async () => {
    const created = await call(ui.base, 'POST', '/monitors', {
      body: { id: 'deploys', capabilities: ['observe', 'act'], source: { kind: 'http', url: `http://127.0.0.1:${(target.address() as AddressInfo).port}/`, interval_s: 1 } },
    });
    const owner = created.body.owner_token;
    await publish(ui.base, 'deploys', owner, { type: 'work.deploy', subject: 'deploy-42', data: {} });
    const sub = await call(ui.base, 'POST', '/subscriptions', { token: owner, body: { monitor: 'deploys', subscriber: 'agent:release', capabilities: ['act'] } });
    const leases = `/subscriptions/${sub.body.subscription.id}/leases`;
    const claimed = await call(ui.base, 'POST', `${leases}/claim`, { token: sub.body.token, body: { subject: 'deploy-42', lease_duration_seconds: 300 } });
    expect(claimed.status).toBe(201);

    await ui.page.goto(`${ui.server.url}/ui#token=${admin}`);
    await ui.page.click('nav button[data-view="actors"]');
    const button = ui.page.locator('[data-chart^="lease:"]').first();
    await button.waitFor();
    // The whole table is redrawn with every view: the focus must survive it.
    await button.focus();
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForSelector('section#charts:not([hidden]) svg.chart');
    await ui.page.waitForSelector('.state.current[data-state="lease.held"]');
    expect(await ui.page.textContent('#chart-actor')).toMatch(/lease:.*state held/);
    // Its transitions from when it started, not from when the chart opened: the claim came before.
    await ui.page.waitForFunction(() => /CLAIM\s+free → held/.test(document.querySelector('#chart-transitions')?.textContent ?? ''));
    // Every edge's label lies on its own edge (the layout places it there).
    const far = await ui.page.evaluate(() =>
      [...document.querySelectorAll('svg.chart text.label')].flatMap((label) => {
        const box = (label as SVGGraphicsElement).getBBox();
        const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
        const path = document.querySelector(`svg.chart path[data-edge="${label.getAttribute('data-edge')}"]`) as SVGPathElement | null;
        if (!path) return [`${label.textContent}: no edge`];
        let best = Number.POSITIVE_INFINITY;
        for (let l = 0; l <= path.getTotalLength(); l += 2) {
          const p = path.getPointAtLength(l);
          best = Math.min(best, Math.hypot(p.x - cx, p.y - cy));
        }
        return best <= box.height ? [] : [`${label.textContent}: ${best.toFixed(0)} px from its edge`];
      }),
    );
    expect(far).toEqual([]);
    expect(await ui.page.locator('svg.chart .state').count()).toBe(5);
    expect(await ui.page.textContent('svg.chart')).toContain('after untilExpiry');

    // Released through the API: the chart moves to free and marks the edge it took, without a reload.
    const released = await call(ui.base, 'POST', `${leases}/release`, { token: sub.body.token, body: { subject: 'deploy-42' } });
    expect(released.status).toBe(200);
    await ui.page.waitForSelector('.state.current[data-state="lease.free"]');
    await ui.page.waitForSelector('svg.chart .edge.fired');
    await ui.page.waitForFunction(() => /RELEASE\s+held → free/.test(document.querySelector('#chart-transitions')?.textContent ?? ''));
    expect(await ui.page.locator('.state.current').first().textContent()).toContain('◀ now');
    await call(ui.base, 'POST', `${leases}/claim`, { token: sub.body.token, body: { subject: 'deploy-42', lease_duration_seconds: 300 } });
    await ui.page.waitForSelector('.state.current[data-state="lease.held"]');
    await ui.page.screenshot({ path: `${ui.browser.shots}/chart-lease.png`, fullPage: true });

    // A source actor: a nested state, its parent outlined too.
    await ui.page.click('nav button[data-view="actors"]');
    await ui.page.click('[data-chart="source:deploys"]');
    await ui.page.waitForSelector('.state.current[data-state="source.running.watching"]');
    await ui.page.waitForSelector('.state.current[data-state="source.running"]');
    await ui.page.screenshot({ path: `${ui.browser.shots}/chart-source.png`, fullPage: true });

    // A phone's width: the chart scales into the page instead of running off it.
    await ui.atPhoneWidth('chart-source-phone', () => (document.querySelector('svg.chart')?.getBoundingClientRect().width ?? 999) <= 390);
    expect(ui.browser.errors).toEqual([]);
  });
});
