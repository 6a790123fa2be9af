// One sentinel daemon against a real server: the trigger variables a
// reaction gets, reject and dead-letter on failure, debounce, and reactions
// published back to the server as observations.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { type Fleet, type FleetOptions, startFleet } from '../../bench/lib/sentinel-fleet.ts';
import { serverCacheFile } from '../../src/recipes/publish/run-monitor.ts';
import { call, publish } from '../support/client.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { until, untilTrue } from '../support/until.ts';

// One server for the file: each test's fleet makes a monitor of its own on it (and its sentinel
// reads only that monitor), so a server per test only cost five more server starts. The tests run
// at once: each has a fleet of its own, and they mostly wait (on reactions, backoffs, debounce).
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess();
});

afterAll(async () => {
  await server?.stop();
});

/** A fleet of one sentinel on the file's server, stopped after the test. */
async function fleetOf({ onTestFinished }: TestContext, options: Omit<FleetOptions, 'instances' | 'server'>): Promise<Fleet> {
  const f = await startFleet({ instances: 1, server, ...options });
  onTestFinished(() => f.stop());
  return f;
}

async function one(
  context: TestContext,
  target: string,
  recipe: Record<string, unknown> = {},
  publishToServer = false,
  filter?: Record<string, unknown>,
): Promise<Fleet> {
  const f = await fleetOf(context, { target, recipe, publishToServer, ...(filter ? { filter } : {}) });
  await untilTrue('the sentinel to subscribe', () => f.sentinels[0]!.log().includes('subscribed to'));
  return f;
}

const runsOf = (f: Fleet) => readdirSync(join(f.sentinels[0]!.root, '.vigil', 'runs')).map((id) => JSON.parse(readFileSync(join(f.sentinels[0]!.root, '.vigil', 'runs', id, 'run.json'), 'utf8')));

describe.concurrent('sentinel', () => {
  it('gives the reaction MONITOR, OBSERVATION_* and the data.vars its recipe declares, and records a run with its trigger', { timeout: 60_000 }, async (context) => {
    // BRANCH is declared by the recipe's vars; EXTRA is not, so it never reaches the environment (issue 42).
    const f = await one(
      context,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${VAR:-default} form, on purpose
      'printf "%s|%s|%s|%s|%s|%s|%s\\n" "$MONITOR" "$OBSERVATION_SEQ" "$OBSERVATION_TYPE" "$OBSERVATION_SUBJECT" "$BRANCH" "${EXTRA:-unset}" "$OBSERVATION_DATA" > "$OUT/vars.txt"; cp "$OBSERVATION_FILE" "$OUT/observation.json"; echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"',
      { vars: { BRANCH: 'none' } },
    );
    const reply = await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'job-7', data: { ok: true, vars: { BRANCH: 'main', EXTRA: 'x' } } });
    await untilTrue('the reaction', () => f.reactions().length === 1);
    const [monitor, seq, type, subject, branch, extra, data] = readFileSync(join(f.out, 'vars.txt'), 'utf8').trim().split('|');
    expect({ monitor, seq, type, subject, branch, extra }).toEqual({ monitor: f.monitor, seq: String(reply.body.seq), type: 'ci.build', subject: 'job-7', branch: 'main', extra: 'unset' });
    // The data as published: the provenance the server adds is in OBSERVATION_FILE only.
    expect(JSON.parse(data!)).toEqual({ ok: true, vars: { BRANCH: 'main', EXTRA: 'x' } });
    expect(JSON.parse(readFileSync(join(f.out, 'observation.json'), 'utf8')).data.provenance).toMatchObject({ origin: 'agent' });
    expect(JSON.parse(readFileSync(join(f.out, 'observation.json'), 'utf8'))).toMatchObject({ id: String(reply.body.seq), subject: 'job-7' });
    // The run is recorded as finished just after the reaction's command exits.
    await untilTrue('the run to be recorded as finished', () => runsOf(f)[0]?.status !== 'running');
    expect(runsOf(f)[0]).toMatchObject({ type: 'sentinel', trigger: `sentinel:react:${reply.body.seq}`, status: 'succeeded' });
  });

  it('on a monitor without act, says what to change and backs off; once update adds act it reacts', { timeout: 120_000 }, async (context) => {
    const f = await fleetOf(context, { target: 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"', capabilities: ['observe'] });
    const log = () => f.sentinels[0]!.log();
    await untilTrue('the advice', () => log().includes('does not grant "act"'));
    expect(log()).toContain(`POST /mp/v0/monitors/${f.monitor}/update {"reason": "sentinel", "patch": {"capabilities": ["observe", "act"]}}`);
    expect(log()).toContain('retrying after 1 s, then twice as long each time up to 60 s');
    // Said once, not once per retry.
    expect(log().split('does not grant').length).toBe(2);
    // Removing a capability is refused; adding one is what the advice says to do.
    const narrowed = await call(f.server.base, 'POST', `/monitors/${f.monitor}/update`, { token: f.ownerToken, body: { reason: 'x', patch: { capabilities: [] } } });
    expect(narrowed.status).toBe(400);
    const update = await call(f.server.base, 'POST', `/monitors/${f.monitor}/update`, {
      token: f.ownerToken,
      body: { reason: 'sentinel', patch: { capabilities: ['observe', 'act'] } },
    });
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    expect(update.body.monitor.capabilities).toEqual(['observe', 'act']);
    await untilTrue('the sentinel to subscribe', () => log().includes('subscribed to'));
    const reply = await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'job-1' });
    await untilTrue('the reaction', () => f.reactions().includes(reply.body.seq));
  });

  it('rejects the lease when the reaction fails, retries, and stops when the fifth reject dead-letters the subject', { timeout: 90_000 }, async (context) => {
    const f = await one(context, 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"; exit 1', { circuit_breaker_threshold: 0 });
    const flaky = (await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'flaky' })).body.seq;
    await untilTrue('the dead letter', () => f.sentinels[0]!.log().includes('is dead-lettered'), scaled(60_000));
    // Other subjects still run; once one has, no further attempt at the dead letter is on its way.
    const fine = (await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'fine' })).body.seq;
    await untilTrue('the other subject', () => f.reactions().includes(fine));
    expect(f.reactions().filter((seq) => seq === flaky)).toHaveLength(5);
    expect(runsOf(f).filter((r) => r.trigger === `sentinel:react:${flaky}`).map((r) => r.status)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed']);
  });

  it('filters on types the monitor has not received yet, reacting only to those', { timeout: 60_000 }, async (context) => {
    const f = await one(context, 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"', {}, false, { types: ['ci.build.failed', 'deploy.*'] });
    await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build.passed', subject: 'a' });
    const failed = (await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build.failed', subject: 'b' })).body.seq;
    const deploy = (await publish(f.server.base, f.monitor, f.ownerToken, { type: 'deploy.done', subject: 'c' })).body.seq;
    // A matching observation after them. Reactions run side by side, so wait for all three that match:
    // by then a reaction to the one that does not, taken before them, would have run too.
    const marker = (await publish(f.server.base, f.monitor, f.ownerToken, { type: 'deploy.marker', subject: 'd' })).body.seq;
    await untilTrue('the three reactions', () => [failed, deploy, marker].every((seq) => f.reactions().includes(seq)));
    expect(f.reactions().sort((a, b) => a - b)).toEqual([failed, deploy, marker]);
  });

  it('with debounce, runs only the newest of a burst on one subject', { timeout: 60_000 }, async (context) => {
    const f = await one(context, 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"', { debounce: 1.5 });
    const seqs: number[] = [];
    for (let i = 0; i < 3; i++) seqs.push((await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'burst', data: { i } })).body.seq);
    await untilTrue('the reaction', () => f.reactions().length >= 1);
    // Another subject's burst of one, after: by its reaction (its own debounce later), the first burst's debounce is long over.
    const marker = (await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'marker' })).body.seq;
    await untilTrue('the reaction to the marker', () => f.reactions().includes(marker));
    expect(f.reactions()).toEqual([seqs[2], marker]);
  });

  it('publishes its reactions as observations when vigil.yml names a server', { timeout: 60_000 }, async (context) => {
    const f = await one(context, 'echo hi', {}, true);
    const reply = await publish(f.server.base, f.monitor, f.ownerToken, { type: 'ci.build', subject: 'job-1' });
    await untilTrue('the reaction', () => f.sentinels[0]!.log().includes('succeeded'));
    const cache = JSON.parse(readFileSync(serverCacheFile(f.sentinels[0]!.root, { VIGIL_HOME: join(f.home, '.vigil') }), 'utf8'));
    const entry = Object.values(cache)[0] as { watch: { subscription: string; token: string } };
    type Run = { type: string; data: { trigger?: string; status?: string } };
    const observations = await until('the run\'s end published', async () => {
      const page = await call(f.server.base, 'GET', `/subscriptions/${entry.watch.subscription}/pull?cursor=1&limit=100`, { token: entry.watch.token });
      const seen = page.body.observations as Run[];
      return seen.some((o) => o.data.status === 'succeeded') ? seen : undefined;
    });
    const mine = observations.filter((o) => o.data.trigger === `sentinel:react:${reply.body.seq}`);
    expect(mine.map((o) => o.data.status)).toEqual(['running', 'succeeded']);
    expect(mine[0]!.type).toBe('ai.vigil.recipe.run');
  });
});
