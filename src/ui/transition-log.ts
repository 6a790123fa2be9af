// The last transitions of every actor, for the dashboard's statecharts. It is
// an XState inspection observer on the root system (the same hook --inspect
// uses) that keeps, per actor, the last few snapshots that an event produced:
// which event, from which state to which, and when. Entries are held in a
// WeakMap on the actor, so an actor stopped by the residency cap takes its
// history with it; nothing else is kept.
import type { ActorRefLike, InspectionEvent } from 'xstate';

export interface TransitionEntry {
  at: string;
  event: string;
  from: string | null;
  to: string;
}

const kept = 8;

/** A state value as the dashboard names it: "held", "running.watching". */
export function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return String(value);
  return Object.entries(value)
    .map(([key, child]) => {
      const rest = statePath(child);
      return rest === '' || rest === '{}' ? key : `${key}.${rest}`;
    })
    .join(',');
}

export class TransitionLog {
  private readonly byActor = new WeakMap<ActorRefLike, TransitionEntry[]>();

  constructor(private readonly now: () => number = Date.now) {}

  readonly inspect = (event: InspectionEvent): void => {
    if (event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as { value?: unknown };
    if (snapshot.value === undefined) return;
    const list = this.byActor.get(event.actorRef) ?? [];
    if (list.length === 0) this.byActor.set(event.actorRef, list);
    const to = statePath(snapshot.value);
    list.push({ at: new Date(this.now()).toISOString(), event: event.event.type, from: list.at(-1)?.to ?? null, to });
    if (list.length > kept) list.shift();
  };

  /** The actor's last transitions, oldest first. */
  of(actor: ActorRefLike): TransitionEntry[] {
    return this.byActor.get(actor) ?? [];
  }
}
