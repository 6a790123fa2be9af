// One turn of a sentinel on one subject: claim the subject's lease, drop what
// another sentinel already handled, run the reaction for the oldest pending
// observation (or, with debounce, the newest, superseding the rest), then
// complete the lease with evidence, or reject it when the reaction failed.
// While the reaction runs its lease is renewed (lease-fence.ts); a lease
// lost meanwhile stops the reaction, records its run `fenced`, and leaves the
// lease alone: it is another sentinel's now.
import { triggerActor } from '../../protocol/client-actor.ts';
import { producerData } from '../../protocol/observation.ts';
import type { SentinelRecipe } from '../../recipes/types.ts';
import { fire } from '../firing.ts';
import { notifyFiring } from '../notify.ts';
import type { TemporalContext } from '../temporal/fire-temporal.ts';
import { afterFiring, shouldNotify } from '../temporal/schedule.ts';
import { LEASE_ENV } from '../../server-client/lease-check.ts';
import type { TriggerVariable } from '../../recipes/outside-vars.ts';
import type { DoneLog } from './done-log.ts';
import { codeOf, type ProtocolClient, type Observation, type SubscriptionRef } from '../../server-client/protocol-client.ts';
import { LeaseFence } from '../../server-client/lease-fence.ts';

export type TurnResult = 'done' | 'held' | 'failed' | 'dead_lettered' | 'fenced';

export interface TurnInput {
  ctx: TemporalContext;
  recipe: SentinelRecipe;
  file: string;
  client: ProtocolClient;
  sub: SubscriptionRef;
  doneLog: DoneLog;
  subject: string;
  /** Pending observations of the subject, oldest first; handled ones are removed from it. */
  queue: Observation[];
  debounce: boolean;
}

export function triggerVariables(monitor: string, o: Observation): Record<string, string> {
  const vars: Record<string, string> = {};
  const own = o.data?.vars;
  if (own && typeof own === 'object' && !Array.isArray(own))
    for (const [k, v] of Object.entries(own)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) vars[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return {
    ...vars,
    MONITOR: monitor,
    OBSERVATION_SEQ: o.id,
    OBSERVATION_TYPE: o.type,
    OBSERVATION_SUBJECT: o.subject ?? '',
    // The producer's data only: the provenance the server adds is in OBSERVATION_FILE.
    OBSERVATION_DATA: JSON.stringify(producerData(o.data) ?? {}),
  } satisfies Record<Exclude<TriggerVariable, 'OBSERVATION_FILE'>, string>;
}

interface Grant {
  /** When the claim was sent (the lease runs out no later than a lease from then). */
  sentAt: number;
  holder: string;
  expires: string | null;
}

/** What a reaction's programs know of its lease (`vigil lease check` reads it), with an observe-only subscription to check it with. */
function leaseEnv(t: TurnInput, grant: Grant, fence: number | undefined): Record<string, string> {
  const done = t.doneLog.sub;
  return {
    [LEASE_ENV.base]: t.client.base,
    [LEASE_ENV.monitor]: t.recipe.watch.monitor,
    [LEASE_ENV.subject]: t.subject,
    [LEASE_ENV.holder]: grant.holder,
    [LEASE_ENV.expiresAt]: grant.expires ?? new Date(grant.sentAt + (t.recipe.lease_seconds ?? 300) * 1000).toISOString(),
    ...(fence !== undefined ? { [LEASE_ENV.fence]: String(fence) } : {}),
    [LEASE_ENV.subscription]: done.id,
    [LEASE_ENV.token]: done.token,
  };
}

export async function reactTurn(t: TurnInput): Promise<TurnResult> {
  const { recipe, client, sub, subject, queue, ctx } = t;
  const name = recipe.name;
  // Every later call names this grant, so that a call arriving late never acts on a newer one (§21).
  let fence: number | undefined;
  let grant: Grant;
  const leaseSeconds = recipe.lease_seconds ?? 300;
  try {
    const sentAt = ctx.clock.now();
    const claimed = await client.lease<{ fence?: number | null; lease?: { holder?: string | null }; expires?: string }>(sub, 'claim', { subject, lease_duration_seconds: leaseSeconds });
    fence = claimed.fence ?? undefined;
    grant = { sentAt, holder: claimed.lease?.holder ?? `sub:${sub.id}`, expires: claimed.expires ?? null };
  } catch (error) {
    const code = codeOf(error);
    if (code === 'LEASE_HELD') return 'held';
    if (code === 'DEAD_LETTERED') return 'dead_lettered';
    throw error;
  }
  await t.doneLog.catchUp();
  for (let i = queue.length - 1; i >= 0; i--) if (t.doneLog.has(Number(queue[i]!.id))) queue.splice(i, 1);
  if (queue.length === 0) {
    await client.lease(sub, 'release', { subject, fence, reason: 'already handled by another sentinel' });
    return 'done';
  }
  const chosen = t.debounce ? queue[queue.length - 1]! : queue[0]!;
  const superseded = t.debounce ? queue.slice(0, -1) : [];
  const seq = Number(chosen.id);

  // A reaction that finished before a crash, whose completion never reached the server, is not run again.
  const previous = ctx.store.reaction(name, sub.id, seq);
  const ranBefore = previous?.status === 'succeeded';
  let runId: string;
  let ok: boolean;
  let reason: string | undefined;
  if (ranBefore) {
    runId = previous.run_id;
    ok = true;
  } else {
    const leaseFence = new LeaseFence({
      clock: ctx.clock,
      leaseSeconds,
      subject,
      grantSentAt: grant.sentAt,
      renew: () => client.lease(sub, 'renew', { subject, fence, lease_duration_seconds: leaseSeconds }),
    });
    try {
      const result = await fire({
        projectRoot: ctx.projectRoot,
        recipe,
        recipeFile: t.file,
        trigger: `sentinel:${name}:${seq}`,
        triggerVars: triggerVariables(recipe.watch.monitor, chosen),
        files: { 'observation.json': `${JSON.stringify(chosen, null, 2)}\n` },
        fileVars: { OBSERVATION_FILE: 'observation.json' } satisfies Record<Extract<TriggerVariable, 'OBSERVATION_FILE'>, string>,
        env: ctx.env,
        clock: ctx.clock,
        store: ctx.store,
        dueMs: ctx.clock.now(),
        ...(ctx.publish ? { publish: ctx.publish } : {}),
        fence: leaseFence,
        extraEnv: leaseEnv(t, grant, fence),
      });
      runId = result.runId;
      ok = result.status === 'succeeded';
      reason = result.reason;
      if (result.status === 'fenced') {
        // The subject is another sentinel's now: its lease is neither completed nor rejected here.
        ctx.log(`sentinel ${name}: observation ${seq} (${subject}) → run ${runId} fenced (${leaseFence.lostReason}); the lease is left to its new holder`);
        return 'fenced';
      }
    } finally {
      leaseFence.stop();
    }
    ctx.store.saveReaction({ recipe: name, subscription: sub.id, seq, subject, run_id: runId, status: ok ? 'succeeded' : 'failed' });
  }

  // Said, notified and counted once: a reaction whose completion is tried again was all that the first time.
  if (!ranBefore) {
    const key = `sentinel:${name}`;
    const state = ctx.store.temporal(key);
    const next = ctx.store.patchTemporal(key, { ...afterFiring(recipe, state, ok, ctx.clock.now()), last_run: new Date(ctx.clock.now()).toISOString() });
    ctx.log(`sentinel ${name}: observation ${seq} (${subject}) → run ${runId} ${ok ? 'succeeded' : `failed${reason ? ` (${reason})` : ''}`}`);
    if (shouldNotify(recipe, ok)) notifyFiring(ctx.log, ctx.publish, `sentinel ${name} ${ok ? 'succeeded' : 'failed'}`, `observation ${seq}: run ${runId}`, triggerActor('sentinel', name));
    if (next.circuit_broken && !state?.circuit_broken) ctx.log(`sentinel ${name}: circuit broken after ${next.consecutive_failures} consecutive failures`);
  }

  if (ok) {
    const evidence = [{ sentinel: name, run: runId, seq }, ...superseded.map((o) => ({ sentinel: name, run: runId, seq: Number(o.id), superseded_by: seq }))];
    try {
      await client.lease(sub, 'complete', { subject, fence, outcome: 'succeeded', evidence });
    } catch (error) {
      if (codeOf(error) !== 'LEASE_LOST') throw error;
      ctx.log(`sentinel ${name}: the lease on "${subject}" was lost while observation ${seq} ran; its run ${runId} stands`);
    }
    for (const e of evidence) t.doneLog.add(e.seq);
    queue.splice(0, queue.length, ...queue.filter((o) => !t.doneLog.has(Number(o.id))));
    return 'done';
  }
  try {
    const reply = await client.lease(sub, 'reject', { subject, fence, reason: `run ${runId} failed${reason ? `: ${reason}` : ''}` });
    return reply.dead_letter ? 'dead_lettered' : 'failed';
  } catch (error) {
    if (codeOf(error) === 'LEASE_LOST') return 'failed';
    throw error;
  }
}
