// The statechart panel's live part: the chosen actor (`/ui/events?chart=<kind>:<key>`),
// its current state and its last transitions. Only an actor the caller's view
// already lists may be charted, so the chart never shows more than the Actors tab.
import type { AnyActorRef } from 'xstate';
import type { MonitorService } from '../service/service.ts';
import { recordedTransitions } from './actor-history.ts';
import { machinesByKind } from './machine-charts.ts';
import { statePath, type TransitionEntry, type TransitionLog } from './transition-log.ts';

export interface ChartTarget {
  kind: string;
  key: string;
}

const maxKey = 512;

/** The `chart` query parameter: absent, a target, or the reason it is refused. */
export function chartParam(query: string): ChartTarget | undefined | string {
  const raw = new URLSearchParams(query).get('chart');
  if (raw === null || raw === '') return undefined;
  const colon = raw.indexOf(':');
  const kind = colon === -1 ? raw : raw.slice(0, colon);
  const key = colon === -1 ? '' : raw.slice(colon + 1);
  if (!(kind in machinesByKind) || key === '' || key.length > maxKey) {
    return `chart must be <kind>:<id> with kind one of ${Object.keys(machinesByKind).join(', ')} and an id of 1 to ${maxKey} characters; got ${JSON.stringify(raw.slice(0, 80))}`;
  }
  return { kind, key };
}

export interface ChartedActor {
  kind: string;
  key: string;
  /** False when the actor is not (or no longer) resident or not visible to this caller. */
  found: boolean;
  state: string | null;
  status: string | null;
  transitions: TransitionEntry[];
}

export function chartedActor(
  service: MonitorService,
  log: TransitionLog,
  visible: ReadonlyArray<{ kind: string; key: string }>,
  target: ChartTarget,
  /** Called with the actor found, so that its transitions are recorded while the chart is open. */
  follow: (actor: AnyActorRef) => void,
): ChartedActor {
  const missing = { ...target, found: false, state: null, status: null, transitions: [] };
  if (!visible.some((a) => a.kind === target.kind && a.key === target.key)) return missing;
  const charted = (actor: AnyActorRef): ChartedActor => {
    follow(actor);
    const snapshot = actor.getSnapshot() as { value: unknown; status: string; context: Record<string, unknown> };
    // What the monitor recorded of it (from when it started), else what was seen since the chart opened.
    const recorded = recordedTransitions(service, target.kind, target.key, snapshot.context);
    return { ...target, found: true, state: statePath(snapshot.value), status: snapshot.status, transitions: recorded ?? log.of(actor) };
  };
  for (const [kind, key, actor] of service.system.residents()) if (kind === target.kind && key === target.key) return charted(actor);
  // A lease kept as a row has no actor until one is needed: charting it is such a need.
  const stored = target.kind === 'lease' ? service.system.leases.get(target.key) : undefined;
  return stored ? charted(stored) : missing;
}
