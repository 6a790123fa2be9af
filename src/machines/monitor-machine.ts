// A monitor's lifecycle: active (accepting publications), paused, retired.
// Retirement is final. Each accepted configure event records its diff in the
// outcome; the service writes the `configured` observation from it.
import { assign, setup } from 'xstate';
import type { MonitorDefinition, MonitorStatus } from '../store/records.ts';

export type MonitorPatch = Partial<
  Pick<
    MonitorDefinition,
    | 'name'
    | 'description'
    | 'visibility'
    | 'horizon'
    | 'types'
    | 'filter'
    | 'source'
    | 'ttl_seconds'
    | 'retire_after_mute_seconds'
    | 'capabilities'
    | 'default_grant'
    | 'cadence'
    | 'rules'
    | 'budget'
  >
>;

export type ConfigureAction = 'update' | 'pause' | 'resume' | 'retire';

export type MonitorEvent =
  | { type: 'UPDATE'; patch: MonitorPatch; now: number }
  | { type: 'PAUSE'; now: number }
  | { type: 'RESUME'; now: number }
  | { type: 'RETIRE'; now: number };

export type Diff = Record<string, { before: unknown; after: unknown }>;

export type MonitorOutcome = { ok: true; changed: boolean; diff: Diff } | { ok: false; code: 'UNAVAILABLE' };

export interface MonitorContext {
  definition: MonitorDefinition;
  outcome: MonitorOutcome | null;
  restoredAs: MonitorStatus;
}

export interface MonitorInput {
  status: MonitorStatus;
  definition: MonitorDefinition;
}

export function diffOf(before: MonitorDefinition, patch: MonitorPatch): Diff {
  const diff: Diff = {};
  for (const [key, after] of Object.entries(patch)) {
    const previous = before[key as keyof MonitorDefinition];
    if (after !== undefined && JSON.stringify(previous) !== JSON.stringify(after)) {
      diff[key] = { before: previous ?? null, after };
    }
  }
  return diff;
}

export const monitorMachine = setup({
  types: {
    context: {} as MonitorContext,
    events: {} as MonitorEvent,
    input: {} as MonitorInput,
  },
  actions: {
    update: assign(({ context, event }) => {
      const e = event as Extract<MonitorEvent, { type: 'UPDATE' }>;
      const diff = diffOf(context.definition, e.patch);
      const changes = Object.fromEntries(Object.entries(diff).map(([k, v]) => [k, v.after]));
      return {
        definition: {
          ...context.definition,
          ...changes,
          version: context.definition.version + 1,
          updated: new Date(e.now).toISOString(),
        },
        outcome: { ok: true as const, changed: Object.keys(diff).length > 0, diff },
      };
    }),
    changeStatus: assign(({ context, event }, params: { from: MonitorStatus; to: MonitorStatus }) => ({
      definition: { ...context.definition, updated: new Date(event.now).toISOString() },
      outcome: { ok: true as const, changed: true, diff: { status: { before: params.from, after: params.to } } },
    })),
    unchanged: assign({ outcome: { ok: true as const, changed: false, diff: {} } }),
    refuse: assign({ outcome: { ok: false as const, code: 'UNAVAILABLE' as const } }),
  },
  guards: {
    storedAs: ({ context }, params: { status: MonitorStatus }) => context.restoredAs === params.status,
  },
}).createMachine({
  id: 'monitor',
  context: ({ input }) => ({ definition: input.definition, outcome: null, restoredAs: input.status }),
  initial: 'restoring',
  states: {
    restoring: {
      always: [
        { guard: { type: 'storedAs', params: { status: 'paused' } }, target: 'paused' },
        { guard: { type: 'storedAs', params: { status: 'retired' } }, target: 'retired' },
        { target: 'active' },
      ],
    },
    active: {
      on: {
        UPDATE: { actions: 'update' },
        PAUSE: { target: 'paused', actions: { type: 'changeStatus', params: { from: 'active', to: 'paused' } } },
        RESUME: { actions: 'unchanged' },
        RETIRE: { target: 'retired', actions: { type: 'changeStatus', params: { from: 'active', to: 'retired' } } },
      },
    },
    paused: {
      on: {
        UPDATE: { actions: 'update' },
        PAUSE: { actions: 'unchanged' },
        RESUME: { target: 'active', actions: { type: 'changeStatus', params: { from: 'paused', to: 'active' } } },
        RETIRE: { target: 'retired', actions: { type: 'changeStatus', params: { from: 'paused', to: 'retired' } } },
      },
    },
    retired: {
      on: {
        UPDATE: { actions: 'refuse' },
        PAUSE: { actions: 'refuse' },
        RESUME: { actions: 'refuse' },
        RETIRE: { actions: 'unchanged' },
      },
    },
  },
});

export function monitorStatusOf(value: unknown): MonitorStatus {
  return value === 'paused' || value === 'retired' ? value : 'active';
}
