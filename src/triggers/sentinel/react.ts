// One turn of a sentinel on one subject: claim the subject's lease, drop what
// another sentinel already handled, run the reaction for the oldest pending
// observation (or, with debounce, the newest, superseding the rest), then
// complete the lease with evidence, or reject it when the reaction failed.
import { triggerActor } from '../../protocol/client-actor.ts';
import { producerData } from '../../protocol/observation.ts';
import type { SentinelRecipe } from '../../recipes/types/sentinel/index.ts';
import { fire } from '../firing.ts';
import { notifyFiring } from '../notify.ts';
import type { TemporalContext } from '../temporal/fire-temporal.ts';
import { afterFiring, shouldNotify } from '../temporal/schedule.ts';
import type { DoneLog } from './done-log.ts';
import { codeOf, type ProtocolClient, type Observation, type SubscriptionRef } from '../../server-client/protocol-client.ts';

export type TurnResult = 'done' | 'held' | 'failed' | 'dead_lettered';

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
  };
}

export async function reactTurn(t: TurnInput): Promise<TurnResult> {
  const { recipe, client, sub, subject, queue, ctx } = t;
  const name = recipe.name;
  // Every later call names this grant, so that a call arriving late never acts on a newer one (§21).
  let fence: number | undefined;
  try {
    const claimed = await client.lease<{ fence?: number | null }>(sub, 'claim', { subject, lease_duration_seconds: recipe.lease_seconds ?? 300 });
    fence = claimed.fence ?? undefined;
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
  const previous = ctx.store.reaction(name, seq);
  let runId: string;
  let ok: boolean;
  let reason: string | undefined;
  if (previous?.status === 'succeeded') {
    runId = previous.run_id;
    ok = true;
  } else {
    const renewEvery = Math.max(1, Math.floor(((recipe.lease_seconds ?? 300) * 1000) / 3));
    let renewTimer: unknown;
    const renew = (): void => {
      renewTimer = ctx.clock.setTimeout(() => {
        client.lease(sub, 'renew', { subject, fence, lease_duration_seconds: recipe.lease_seconds ?? 300 }).catch(() => {});
        renew();
      }, renewEvery);
    };
    renew();
    try {
      const result = await fire({
        projectRoot: ctx.projectRoot,
        recipe,
        recipeFile: t.file,
        trigger: `sentinel:${name}:${seq}`,
        triggerVars: triggerVariables(recipe.watch.monitor, chosen),
        files: { 'observation.json': `${JSON.stringify(chosen, null, 2)}\n` },
        fileVars: { OBSERVATION_FILE: 'observation.json' },
        env: ctx.env,
        clock: ctx.clock,
        store: ctx.store,
        dueMs: ctx.clock.now(),
        ...(ctx.publish ? { publish: ctx.publish } : {}),
      });
      runId = result.runId;
      ok = result.status === 'succeeded';
      reason = result.reason;
    } finally {
      ctx.clock.clearTimeout(renewTimer);
    }
    ctx.store.saveReaction({ recipe: name, seq, subject, run_id: runId, status: ok ? 'succeeded' : 'failed' });
  }

  const key = `sentinel:${name}`;
  const state = ctx.store.temporal(key);
  const next = ctx.store.patchTemporal(key, { ...afterFiring(recipe, state, ok, ctx.clock.now()), last_run: new Date(ctx.clock.now()).toISOString() });
  ctx.log(`sentinel ${name}: observation ${seq} (${subject}) → run ${runId} ${ok ? 'succeeded' : `failed${reason ? ` (${reason})` : ''}`}`);
  if (shouldNotify(recipe, ok)) notifyFiring(ctx.log, ctx.publish, `sentinel ${name} ${ok ? 'succeeded' : 'failed'}`, `observation ${seq}: run ${runId}`, triggerActor('sentinel', name));
  if (next.circuit_broken && !state?.circuit_broken) ctx.log(`sentinel ${name}: circuit broken after ${next.consecutive_failures} consecutive failures`);

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
