// The last transitions of the actors the dashboard's statecharts follow. An
// actor is followed only while a chart shows it: its system's inspection hook
// (XState's `system.inspect`, attached at run time) records each snapshot an
// event produced — which event, from which state to which, and when — and is
// detached when the last chart following the actor closes. Nothing is paid
// for actors no one is looking at.
import type { AnyActorRef, InspectionEvent } from 'xstate';

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

interface Followed {
  entries: TransitionEntry[];
  followers: number;
  detach: () => void;
}

export class TransitionLog {
  private readonly byActor = new WeakMap<AnyActorRef, Followed>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Starts recording the actor's transitions; the returned function stops (once every follower has). */
  follow(actor: AnyActorRef): () => void {
    let followed = this.byActor.get(actor);
    if (!followed) {
      const entries: TransitionEntry[] = [];
      // The snapshot is already the new one when the inspection event comes: remember the state before.
      let before = statePath(actor.getSnapshot().value);
      const subscription = actor.system.inspect((event: InspectionEvent) => {
        if (event.type !== '@xstate.snapshot' || event.actorRef !== actor) return;
        const value = (event.snapshot as { value?: unknown }).value;
        if (value === undefined) return;
        const to = statePath(value);
        entries.push({ at: new Date(this.now()).toISOString(), event: event.event.type, from: before, to });
        before = to;
        if (entries.length > kept) entries.shift();
      });
      followed = { entries, followers: 0, detach: () => subscription.unsubscribe() };
      this.byActor.set(actor, followed);
    }
    const current = followed;
    current.followers++;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      current.followers--;
      if (current.followers === 0) {
        current.detach();
        this.byActor.delete(actor);
      }
    };
  }

  /** The followed actor's last transitions, oldest first. */
  of(actor: AnyActorRef): TransitionEntry[] {
    return this.byActor.get(actor)?.entries ?? [];
  }
}
