// The ai.vigil/monitors extension (§15) through the SDK's own client against
// a real `vigil mcp` child process; the coalescing of resource notifications
// in-process on a manual clock, and the coalescer alone.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { MonitorService } from '../src/service/service.ts';
import { memoryPath, Store } from '../src/store/store.ts';
import { localBackend } from '../src/transport/mcp-backend.ts';
import { Coalescer, type Timers } from '../src/transport/mcp-coalescer.ts';
import { createMcpDoor } from '../src/transport/mcp-door.ts';
import { ManualClock, turns } from './support/manual-clock.ts';
import { call as httpCall } from './support/client.ts';
import { repoRoot, startServerProcess, tempDir, vigilArgs } from './support/server-process.ts';
import { seedToolNames } from './support/seed-tools.ts';
import { spawnChild } from './support/children.ts';
import { scaled } from './support/time-scale.ts';
import { untilTrue } from './support/until.ts';

const toolNames = seedToolNames;

type Body = Record<string, any>;

interface Session {
  readonly client: Client;
  readonly stderr: () => string;
  readonly updated: string[];
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean; body: Body; status: unknown }>;
  ok(name: string, args?: Record<string, unknown>): Promise<Body>;
  close(): Promise<void>;
}

async function startSession(args: readonly string[] = []): Promise<Session> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: vigilArgs(['mcp', ...args]),
    cwd: repoRoot,
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'vigil-test', version: '0.0.0' });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  await client.connect(transport);
  const call: Session['call'] = async (name, callArgs = {}) => {
    const result = await client.callTool({ name, arguments: callArgs });
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    // The text content and the structured content carry the same body.
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    return { isError: result.isError === true, body: result.structuredContent as Body, status: result._meta?.['ai.vigil/status'] };
  };
  return {
    client,
    stderr: () => stderr,
    updated,
    call,
    async ok(name, callArgs) {
      const result = await call(name, callArgs);
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.body)}`);
      return result.body;
    },
    close: () => client.close(),
  };
}

/** A rule's `then` (the base protocol's name), spread in: an object literal with a `then` key reads as a promise to a linter. */
const then = (action: string) => Object.fromEntries([['then', action]]);

describe('vigil mcp', () => {
  let s: Session;
  beforeAll(async () => {
    s = await startSession();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('serves the 13 tools of the seed, each with a JSON Schema, and logs only to stderr', async () => {
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...toolNames].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description).toBeTruthy();
      expect(tool.inputSchema.properties).toHaveProperty('bearer');
    }
    const configure = tools.find((t) => t.name === 'monitor_configure')!;
    expect(configure.inputSchema.required).toEqual(expect.arrayContaining(['action', 'id', 'reason']));
    expect(s.client.getServerVersion()?.name).toBe('vigil');
    expect(s.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await untilTrue(() => `the stdio line; stderr: ${s.stderr()}`, () => s.stderr().includes('serving the ai.vigil/monitors tool extension on stdio'), scaled(5000));
  });

  it('runs create, publish, subscribe, pull, ack, claim and complete through the tools', async () => {
    const discovered = await s.ok('monitor_discover');
    expect(discovered.capabilities.extensions['ai.vigil/monitors']).toEqual({ version: '0.1' });

    const created = await s.call('monitor_create', { id: 'mcp-flow', capabilities: ['observe', 'act'] });
    expect(created.status).toBe(201);
    const owner = created.body.owner_token as string;
    expect(created.body.monitor.id).toBe('mcp-flow');

    const published = await s.ok('monitor_publish', {
      id: 'mcp-flow',
      bearer: owner,
      type: 'build.failed',
      subject: 'job-1',
      data: { exit: 1 },
    });
    expect(published.seq).toBe(2);
    expect(published.observation.data.exit).toBe(1);

    const subscribed = await s.ok('monitor_subscribe', {
      monitor: 'mcp-flow',
      subscriber: 'agent:fixer',
      capabilities: ['act'],
      bearer: owner,
    });
    const sub = subscribed.subscription.id as string;
    const token = subscribed.token as string;

    const page = await s.ok('monitor_pull', { subscription: sub, bearer: token, types: 'build.*' });
    expect(page.observations.map((o: Body) => o.type)).toEqual(['build.failed']);
    const acked = await s.ok('monitor_ack', { subscription: sub, bearer: token, cursor: page.next });
    expect(acked.subscription?.cursor ?? acked.cursor).toBe(page.next);

    const claimed = await s.call('lease_claim', { subscription: sub, bearer: token, subject: 'job-1' });
    expect(claimed.status).toBe(201);
    expect(claimed.body.lease.holder).toBe(`sub:${sub}`);
    const completed = await s.ok('lease_complete', {
      subscription: sub,
      bearer: token,
      subject: 'job-1',
      outcome: 'fixed',
      evidence: ['commit abc'],
    });
    expect(completed.lease.state).toBe('completed');

    const state = await s.ok('monitor_state', { id: 'mcp-flow', bearer: owner });
    expect(state.counters.acted).toBe(1);
    const paused = await s.ok('monitor_configure', { action: 'pause', id: 'mcp-flow', reason: 'done', bearer: owner });
    expect(paused.monitor.status).toBe('paused');
  });

  it('takes the reference tools\' arguments: cadence and rules, a configure rule, a pull filter, lease notes', async () => {
    const { tools } = await s.client.listTools();
    const properties = (name: string) => Object.keys(tools.find((t) => t.name === name)!.inputSchema.properties ?? {});
    expect(properties('monitor_create')).toEqual(expect.arrayContaining(['cadence', 'rules', 'budget']));
    expect(properties('monitor_configure')).toContain('rule');
    expect(properties('monitor_pull')).toContain('filter');
    expect(properties('lease_claim')).toContain('note');
    expect(properties('lease_complete')).toContain('note');

    const cadence = { heartbeat_seconds: 60, event_driven: true };
    const rules = [{ id: 'fix-builds', when: { types: ['build.failed'] }, ...then('run:fixer') }];
    const created = await s.call('monitor_create', {
      id: 'mcp-base',
      capabilities: ['observe', 'act'],
      types: ['build.failed', 'build.passed'],
      cadence,
      rules,
      budget: { currency: 'EUR', per_day: 3 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.monitor).toMatchObject({ cadence, rules, budget: { currency: 'EUR', per_day: 3 } });
    const owner = created.body.owner_token as string;
    const bad = await s.call('monitor_create', { id: 'mcp-base-bad', rules: [{ id: 'x', when: {}, ...then('explode') }] });
    expect(bad.body).toMatchObject({ code: 'UNKNOWN_VOCABULARY', field: 'rules.0.then' });

    const configured = await s.ok('monitor_configure', {
      action: 'update',
      id: 'mcp-base',
      reason: 'quieter',
      rule: 'fix-builds',
      patch: { cadence: { event_driven: false } },
      bearer: owner,
    });
    expect(configured.monitor.cadence).toEqual({ event_driven: false });

    await s.ok('monitor_publish', { id: 'mcp-base', bearer: owner, type: 'build.passed', subject: 'job-0' });
    await s.ok('monitor_publish', { id: 'mcp-base', bearer: owner, type: 'build.failed', subject: 'job-1' });
    const { subscription, token } = await s.ok('monitor_subscribe', { monitor: 'mcp-base', subscriber: 'agent:base', capabilities: ['observe', 'act'], bearer: owner });
    const page = await s.ok('monitor_pull', { subscription: subscription.id, bearer: token, filter: { types: ['build.failed'] } });
    expect(page.observations.map((o: Body) => o.subject)).toEqual(['job-1']);
    const configuredEntry = (await s.ok('monitor_pull', { subscription: subscription.id, bearer: token, filter: { types: ['ai.vigil.monitor.configured'] } })).observations;
    expect(configuredEntry.map((o: Body) => o.data.payload.rule ?? null)).toEqual([null, 'fix-builds']);
    const acked = await s.ok('monitor_ack', { subscription: subscription.id, bearer: token, cursor: page.next });
    expect(acked).toMatchObject({ cursor: page.next, head: page.head, lag: 0 });

    expect((await s.call('lease_claim', { subscription: subscription.id, bearer: token, subject: 'job-1', note: 'on it' })).status).toBe(201);
    await s.ok('lease_complete', { subscription: subscription.id, bearer: token, subject: 'job-1', outcome: 'fixed', note: 'one-line fix' });
    const leases = await s.ok('monitor_pull', { subscription: subscription.id, bearer: token, cursor: 1, filter: { types: ['ai.vigil.monitor.lease'] } });
    expect(leases.observations.map((o: Body) => [o.data.payload.action, o.data.payload.note])).toEqual([
      ['claim', 'on it'],
      ['complete', 'one-line fix'],
    ]);
  });

  it('answers refusals as isError with the protocol error body', async () => {
    const { body: created } = await s.call('monitor_create', { id: 'mcp-errors', visibility: 'public' });
    const noToken = await s.call('monitor_publish', { id: 'mcp-errors', type: 'x.y' });
    expect(noToken.isError).toBe(true);
    expect(noToken.body.code).toBe('UNAUTHORIZED');
    expect(noToken.status).toBe(401);

    const vocabulary = await s.call('monitor_publish', { id: 'mcp-errors', type: 'x.y', tier: 'gospel', bearer: created.owner_token });
    expect(vocabulary.isError).toBe(true);
    expect(vocabulary.body).toMatchObject({ code: 'UNKNOWN_VOCABULARY', invalid: ['tier:gospel'] });
    expect(vocabulary.body.rejected_seq).toBeGreaterThan(1);

    const missing = await s.call('monitor_get', { id: 'no-such-monitor' });
    expect(missing.body.code).toBe('NOT_FOUND');

    const action = await s.call('monitor_configure', { action: 'explode', id: 'mcp-errors', reason: 'x', bearer: created.owner_token });
    expect(action.body).toMatchObject({ code: 'INVALID', field: 'action' });

    await expect(s.client.callTool({ name: 'monitor_explode', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it('lists and reads monitor://<id>/definition and /state of public monitors and of private ones this session created', async () => {
    const { owner_token: owner } = await s.ok('monitor_create', { id: 'mcp-public', visibility: 'public' });
    await s.ok('monitor_create', { id: 'mcp-private' });
    await s.ok('monitor_publish', { id: 'mcp-public', bearer: owner, type: 'disk.usage', data: { used: 0.5 } });

    const { resources } = await s.client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(['monitor://mcp-public/definition', 'monitor://mcp-public/state']));
    // monitor_create defaults to private: what the session just created is a resource too.
    expect(uris).toEqual(expect.arrayContaining(['monitor://mcp-private/definition', 'monitor://mcp-private/state']));
    const { resourceTemplates } = await s.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('monitor://{id}/state');

    const state = await s.client.readResource({ uri: 'monitor://mcp-public/state' });
    const doc = JSON.parse((state.contents[0] as { text: string }).text);
    expect(doc).toMatchObject({ monitor: 'mcp-public', head: 2 });
    const definition = await s.client.readResource({ uri: 'monitor://mcp-public/definition' });
    expect(JSON.parse((definition.contents[0] as { text: string }).text)).toMatchObject({ id: 'mcp-public', visibility: 'public' });

    const privateState = await s.client.readResource({ uri: 'monitor://mcp-private/state' });
    expect(JSON.parse((privateState.contents[0] as { text: string }).text)).toMatchObject({ monitor: 'mcp-private' });
    await expect(s.client.readResource({ uri: 'monitor://mcp-nowhere/state' })).rejects.toThrow(/-32002|No/);
  });

  it('notifies a subscribed state resource when the monitor records something', async () => {
    const { owner_token: owner } = await s.ok('monitor_create', { id: 'mcp-watched', visibility: 'public' });
    const uri = 'monitor://mcp-watched/state';
    await s.client.subscribeResource({ uri });
    const count = () => s.updated.filter((u) => u === uri).length;
    await s.ok('monitor_publish', { id: 'mcp-watched', bearer: owner, type: 'ping.sent' });
    await untilTrue(() => `a notification (${count()})`, () => count() === 1, scaled(5000));
    expect(s.updated).toEqual([uri]);
  });
});

describe('resource notifications, in-process on a manual clock', () => {
  /** The extension's door over a service, both on one manual clock, and the SDK's client over an in-memory transport. */
  async function session() {
    const clock = new ManualClock();
    const service = new MonitorService({ store: Store.open({ path: memoryPath }), clock, log: () => {} });
    clock.idle = async () => {
      await service.settle();
      await turns();
    };
    const door = createMcpDoor(localBackend(service, 'in memory'), { timers: clock, log: () => {} });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await door.server.connect(serverSide);
    const client = new Client({ name: 'vigil-test', version: '0.0.0' });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await client.connect(clientSide);
    const ok = async (name: string, args: Record<string, unknown>): Promise<Body> => {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
      return result.structuredContent as Body;
    };
    const close = async () => {
      await client.close();
      await door.close();
      service.close();
    };
    return { clock, client, updated, ok, close };
  }

  it('passes the first change on at once and folds a burst into one call at the end of the 250 ms', async () => {
    const s = await session();
    try {
      const { owner_token: owner } = await s.ok('monitor_create', { id: 'watched', visibility: 'public' });
      const uri = 'monitor://watched/state';
      await s.client.subscribeResource({ uri });
      await s.ok('monitor_publish', { id: 'watched', bearer: owner, type: 'ping.sent' });
      await s.clock.advance(0);
      expect(s.updated).toEqual([uri]);
      // Twenty changes within the interval: nothing more until it ends, then one.
      await Promise.all(Array.from({ length: 20 }, (_, i) => s.ok('monitor_publish', { id: 'watched', bearer: owner, type: 'ping.sent', data: { i } })));
      await s.clock.advance(249);
      expect(s.updated).toEqual([uri]);
      await s.clock.advance(1);
      expect(s.updated).toEqual([uri, uri]);
      // A change after a quiet interval goes out at once again.
      await s.clock.advance(1000);
      await s.ok('monitor_publish', { id: 'watched', bearer: owner, type: 'ping.sent' });
      await s.clock.advance(0);
      expect(s.updated).toEqual([uri, uri, uri]);
    } finally {
      await s.close();
    }
  });

  it('sends nothing for a resource once it is unsubscribed, a trailing call included', async () => {
    const s = await session();
    try {
      const { owner_token: owner } = await s.ok('monitor_create', { id: 'left', visibility: 'public' });
      const uri = 'monitor://left/state';
      await s.client.subscribeResource({ uri });
      await s.ok('monitor_publish', { id: 'left', bearer: owner, type: 'ping.sent' });
      await s.ok('monitor_publish', { id: 'left', bearer: owner, type: 'ping.sent' });
      await s.clock.advance(0);
      expect(s.updated).toEqual([uri]);
      // The second change waits for the interval's end; unsubscribing drops it.
      await s.client.unsubscribeResource({ uri });
      await s.ok('monitor_publish', { id: 'left', bearer: owner, type: 'ping.sent' });
      await s.clock.advance(1000);
      expect(s.updated).toEqual([uri]);
    } finally {
      await s.close();
    }
  });
});

describe('vigil mcp --state', () => {
  it('keeps monitors and observations across two processes', async () => {
    const state = join(tempDir('vigil-mcp-'), 'monitors.db');
    const first = await startSession(['--state', state]);
    const { owner_token: owner } = await first.ok('monitor_create', { id: 'mcp-kept' });
    await first.ok('monitor_publish', { id: 'mcp-kept', bearer: owner, type: 'deploy.done', subject: 'v1' });
    await first.close();

    const second = await startSession(['--state', state]);
    try {
      const monitor = await second.ok('monitor_get', { id: 'mcp-kept', bearer: owner });
      expect(monitor.head).toBe(2);
      const { monitors } = await second.ok('monitor_list', { bearer: owner });
      expect(monitors.map((m: Body) => m.id)).toEqual(['mcp-kept']);
    } finally {
      await second.close();
    }
  });
});

describe('vigil mcp on a closing stdin', () => {
  it('answers every request already sent, then exits 0 with nothing but JSON-RPC on stdout', async () => {
    const child = spawnChild(process.execPath, vigilArgs(['mcp']), { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    // Twenty tool calls in flight at once, as an agent's parallel tool use sends them.
    const many = Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'monitor_create', arguments: { id: `mcp-many-${i}` } } }));
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'monitor_create', arguments: { id: 'mcp-last-words' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      ...many,
    ];
    child.stdin.end(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    expect(await exited).toBe(0);
    const messages = stdout.trim().split('\n').map((line) => JSON.parse(line));
    const answered = messages.filter((m) => 'id' in m).map((m) => m.id as number);
    expect(answered.sort((a, b) => a - b)).toEqual([1, 2, 3, ...many.map((m) => m.id)]);
    // Each call's listener on the door's shutdown signal goes with the call: no leak for Node to warn of on the client's log.
    expect(stderr).not.toContain('MaxListenersExceededWarning');
    const created = messages.find((m) => m.id === 2);
    expect(created.result.structuredContent.monitor.id).toBe('mcp-last-words');
  });
});

describe('notification coalescer', () => {
  function fakeTimers() {
    let now = 0;
    const queue: { at: number; fn: () => void; id: number }[] = [];
    let nextId = 1;
    const timers: Timers = {
      now: () => now,
      setTimeout: (fn, ms) => {
        const id = nextId++;
        queue.push({ at: now + ms, fn, id });
        return id;
      },
      clearTimeout: (id) => {
        const i = queue.findIndex((t) => t.id === id);
        if (i >= 0) queue.splice(i, 1);
      },
    };
    const advance = (ms: number) => {
      now += ms;
      for (const due of queue.filter((t) => t.at <= now).sort((a, b) => a.at - b.at)) {
        queue.splice(queue.indexOf(due), 1);
        due.fn();
      }
    };
    return { timers, advance };
  }

  it('fires at once, folds a burst into one trailing call, and keeps keys apart', () => {
    const { timers, advance } = fakeTimers();
    const fired: string[] = [];
    const c = new Coalescer(250, (key) => fired.push(key), timers);
    c.touch('a');
    expect(fired).toEqual(['a']);
    for (let i = 0; i < 20; i++) {
      advance(5);
      c.touch('a');
    }
    c.touch('b');
    expect(fired).toEqual(['a', 'b']);
    advance(149);
    expect(fired).toEqual(['a', 'b']);
    advance(1);
    expect(fired).toEqual(['a', 'b', 'a']);
    advance(1000);
    c.touch('a');
    expect(fired).toEqual(['a', 'b', 'a', 'a']);
    c.touch('a');
    c.forget('a');
    advance(1000);
    expect(fired).toEqual(['a', 'b', 'a', 'a']);
  });
});

describe('vigil mcp --base', () => {
  it('attaches to a running server: tools act on its state, resources follow the session\'s tokens', async () => {
    const server = await startServerProcess();
    const other = (await httpCall(server.base, 'POST', '/monitors', { body: { id: 'http-private' } })).body.owner_token as string;
    const s = await startSession(['--base', server.url]);
    try {
      await untilTrue(() => `the server line; stderr: ${s.stderr()}`, () => s.stderr().includes(`(server ${server.base}, pid`), scaled(5000));
      const created = await s.call('monitor_create', { id: 'via-mcp' });
      expect(created.status).toBe(201);
      const owner = created.body.owner_token as string;
      expect((await s.call('monitor_publish', { id: 'via-mcp', bearer: owner, type: 'disk.usage' })).status).toBe(201);
      // The server itself holds what the tools did.
      const seen = await httpCall(server.base, 'GET', '/monitors/via-mcp/state', { token: owner });
      expect(seen.status).toBe(200);
      expect(seen.body.head).toBe(2);
      const refused = await s.call('monitor_publish', { id: 'via-mcp', bearer: 'vgo_wrong', type: 'disk.usage' });
      expect(refused.isError).toBe(true);
      expect(refused.body.code).toMatch(/UNAUTHORIZED|NOT_FOUND/);

      const uris = (await s.client.listResources()).resources.map((r) => r.uri);
      expect(uris).toContain('monitor://via-mcp/state');
      expect(uris.some((u) => u.includes('http-private'))).toBe(false);
      const state = await s.client.readResource({ uri: 'monitor://via-mcp/state' });
      expect(JSON.parse((state.contents[0] as { text: string }).text)).toMatchObject({ monitor: 'via-mcp', head: 2 });
      await expect(s.client.readResource({ uri: 'monitor://http-private/state' })).rejects.toThrow(/-32002|No/);
    } finally {
      await s.close();
    }
    const withToken = await startSession(['--base', server.url, '--token', other]);
    try {
      const uris = (await withToken.client.listResources()).resources.map((r) => r.uri);
      expect(uris).toContain('monitor://http-private/definition');
    } finally {
      await withToken.close();
      await server.stop();
    }
  }, scaled(60_000));

  it('refuses --state with --base', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, vigilArgs(['mcp', '--base', 'http://127.0.0.1:1', '--state', '/tmp/x.db']), { cwd: repoRoot, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--state <file> or --base <url>, not both');
  });
});

describe('the shipped .mcp.json', () => {
  it('starts the extension with each entry\'s command', async () => {
    const { readFileSync } = await import('node:fs');
    const config = JSON.parse(readFileSync(join(repoRoot, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> };
    const server = await startServerProcess();
    const home = tempDir();
    try {
      for (const [name, entry] of Object.entries(config.mcpServers)) {
        expect(entry.command).toBe('node');
        // The --base entry points at the default port; here it points at this test's server.
        const args = entry.args.map((a) => (a === 'http://127.0.0.1:8130' ? server.url : a));
        const transport = new StdioClientTransport({ command: process.execPath, args, cwd: repoRoot, env: { ...(process.env as Record<string, string>), HOME: home }, stderr: 'pipe' });
        const client = new Client({ name: 'vigil-test', version: '0.0.0' });
        await client.connect(transport);
        const { tools } = await client.listTools();
        expect(tools.length, name).toBe(seedToolNames.length);
        const created = await client.callTool({ name: 'monitor_create', arguments: { id: `from-${name}` } });
        expect(created.isError, name).not.toBe(true);
        await client.close();
      }
    } finally {
      await server.stop();
    }
  }, scaled(60_000));
});
