// What a recipe run tells the ledger and the plugins: run start and end,
// step start and end, gate open and answer. The ledger keeps run.start,
// step.end, run.end and gate.answer (hash-chained, no secrets); plugin hooks
// get run.start, run.end, step.start, step.end and gate.open as JSON on
// stdin. Neither may break a run: failures become one warning line.
import { sdkContext } from '../workspace/context.ts';
import { appendLedger } from '../ledger/ledger.ts';
import { firePluginHook, loadPlugins, pluginEvents } from '../plugins/plugins.ts';

export type RunEvent = 'run.start' | 'run.end' | 'step.start' | 'step.end' | 'gate.open' | 'gate.answer';

const LEDGERED = new Set<RunEvent>(['run.start', 'step.end', 'run.end', 'gate.answer']);

export function runEventSink(projectRoot: string, env: NodeJS.ProcessEnv, warn: (line: string) => void): (event: RunEvent, data: Record<string, unknown>) => void {
  const ctx = sdkContext({ workspace: projectRoot, env });
  let hooked: boolean | null = null;
  return (event, data) => {
    try {
      if (LEDGERED.has(event)) appendLedger(projectRoot, event, data);
      if ((pluginEvents as readonly string[]).includes(event)) {
        hooked ??= loadPlugins(ctx).plugins.some((p) => Object.keys(p.hooks).length > 0);
        if (hooked) firePluginHook(ctx, event as (typeof pluginEvents)[number], data);
      }
    } catch (error) {
      warn(`ledger/plugins: ${event}: ${(error as Error).message}`);
    }
  };
}

const FINAL = new Set(['succeeded', 'failed', 'killed', 'cancelled', 'skipped', 'conflict', 'reused']);

/** The events a step's change stands for: a gate answer (a change carrying a choice), then gate.open, step.end or step.start. */
export function stepEvents(
  run: string,
  step: { label: string; status: string; reason?: string; gate?: { choice?: string; chosen_by?: string } | null },
  patch: { status?: string; gate?: unknown },
): Array<[RunEvent, Record<string, unknown>]> {
  const base = { run, step: step.label };
  const out: Array<[RunEvent, Record<string, unknown>]> = [];
  if (patch.gate && step.gate?.choice) out.push(['gate.answer', { ...base, choice: step.gate.choice, by: step.gate.chosen_by ?? null }]);
  if (!patch.status) return out;
  if (step.status === 'awaiting_gate') out.push(['gate.open', base]);
  else if (FINAL.has(step.status)) out.push(['step.end', { ...base, status: step.status, ...(step.reason ? { reason: step.reason } : {}) }]);
  else if (step.status === 'running' && !patch.gate) out.push(['step.start', base]);
  return out;
}
