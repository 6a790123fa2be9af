// GET /ui/machines: the statecharts the dashboard draws, read from the XState
// machine objects themselves (src/machines), never a copy written by hand:
// every state with its parent and kind, and every transition with its event,
// guard, delay and actions. A transition without a target stays in its state
// (a refusal or a counter); it is listed with the state, not drawn as an edge.
import type { AnyStateMachine } from 'xstate';
import { leaseMachine } from '../machines/lease-machine.ts';
import { monitorMachine } from '../machines/monitor-machine.ts';
import { sourceMachine } from '../machines/source-machine.ts';
import { subscriptionMachine } from '../machines/subscription-machine.ts';

export interface ChartState {
  id: string;
  key: string;
  parent: string | null;
  type: string;
  initial: boolean;
}

export interface ChartTransition {
  from: string;
  to: string | null;
  /** The label: the event's name, `after <delay>`, or `error (<invoked actor>)`. */
  event: string;
  /** The event type XState records when the transition is taken (matches the actor's transitions). */
  eventType: string;
  guard: string | null;
  delay: string | null;
  actions: string[];
  reenter: boolean;
}

export interface Chart {
  kind: string;
  machine: string;
  states: ChartState[];
  transitions: ChartTransition[];
}

/** The machines the dashboard's Actors tab names, by actor kind. */
export const machinesByKind: Record<string, AnyStateMachine> = {
  monitor: monitorMachine,
  subscription: subscriptionMachine,
  lease: leaseMachine,
  source: sourceMachine,
};

// The node shapes XState keeps at run time (v5); only what is read here.
interface Node {
  id: string;
  key: string;
  type: string;
  parent?: Node;
  states: Record<string, Node>;
  initial?: { target?: Node[] };
  transitions: Map<string, Transition[]>;
  always?: Transition[];
  after: Array<{ eventType: string; delay: unknown }>;
  invoke: Array<{ id: string; src: unknown }>;
}
interface Transition {
  eventType: string;
  target?: Node[];
  guard?: unknown;
  actions?: unknown[];
  reenter?: boolean;
}

/** A guard as a person reads it: its name, its params, and/or/not spelled out. */
export function guardText(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const g = guard as { check?: unknown; guards?: unknown[]; name?: string };
    const parts = (g.guards ?? []).map((x) => guardText(x) ?? '?');
    if (g.name === 'and' || g.name === 'evaluateAnd') return parts.join(' && ');
    if (g.name === 'or' || g.name === 'evaluateOr') return parts.join(' || ');
    if (parts.length === 1) return `!${parts[0]}`;
    return parts.length > 0 ? parts.join(' && ') : (g.name ?? 'guard');
  }
  const { type, params } = guard as { type?: string; params?: unknown };
  if (typeof params === 'object' && params !== null) {
    return `${type}(${Object.entries(params).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')})`;
  }
  return type ?? null;
}

const actionName = (action: unknown): string =>
  typeof action === 'string' ? action : ((action as { type?: string; name?: string }).type ?? (action as { name?: string }).name ?? 'action');

/** The event as the chart labels it: delays and an invoked actor's errors by their names. */
function eventLabel(node: Node, eventType: string): { event: string; delay: string | null } {
  const after = node.after.find((a) => a.eventType === eventType);
  if (after) return { event: `after ${String(after.delay)}`, delay: String(after.delay) };
  const invoke = node.invoke.find((i) => eventType === `xstate.error.actor.${i.id}` || eventType === `xstate.done.actor.${i.id}`);
  if (invoke) {
    const src = typeof invoke.src === 'string' ? invoke.src : 'invoked';
    return { event: `${eventType.startsWith('xstate.error') ? 'error' : 'done'} (${src})`, delay: null };
  }
  return { event: eventType, delay: null };
}

export function chartOf(kind: string, machine: AnyStateMachine): Chart {
  const states: ChartState[] = [];
  const transitions: ChartTransition[] = [];
  const visit = (node: Node) => {
    const initials = new Set((node.initial?.target ?? []).map((t) => t.id));
    for (const child of Object.values(node.states)) {
      states.push({ id: child.id, key: child.key, parent: node.parent ? node.id : null, type: child.type, initial: initials.has(child.id) });
    }
    const add = (eventType: string, t: Transition) =>
      transitions.push({
        from: node.id,
        to: t.target?.[0]?.id ?? null,
        eventType,
        ...eventLabel(node, eventType),
        guard: guardText(t.guard),
        actions: (t.actions ?? []).map(actionName),
        reenter: t.reenter === true,
      });
    for (const [eventType, list] of node.transitions) for (const t of list) add(eventType, t);
    for (const t of node.always ?? []) add('always', t);
    for (const child of Object.values(node.states)) visit(child);
  };
  const root = machine.root as unknown as Node;
  visit(root);
  return { kind, machine: root.id, states, transitions };
}

/** Every machine's chart; the same for every caller (the definitions are code, not data). */
export function machineCharts(): Chart[] {
  return Object.entries(machinesByKind).map(([kind, machine]) => chartOf(kind, machine));
}
