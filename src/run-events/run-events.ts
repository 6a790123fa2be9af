// What a recipe run tells the ledger and the plugins: run start and end,
// step start and end, gate open and answer. The ledger keeps run.start,
// step.end, run.end and gate.answer (hash-chained, no secrets); plugin hooks
// get run.start, run.end, step.start, step.end and gate.open as JSON on
// stdin. Neither may break a run: failures become one warning line.
// Ledger entries of one turn of the event loop are appended together (one
// taking of the ledger's lock for a wide run's children that end at once), at
// the latest when the process exits, and before any plugin hook runs.
import { sdkContext } from '../workspace/context.ts';
import { appendLedgerEntries } from '../ledger/ledger.ts';
import { firePluginHook, loadPlugins, pluginEvents } from '../plugins/plugins.ts';

export type RunEvent = 'run.start' | 'run.end' | 'step.start' | 'step.end' | 'gate.open' | 'gate.answer';

const LEDGERED = new Set<RunEvent>(['run.start', 'step.end', 'run.end', 'gate.answer']);

interface Pending {
  kind: RunEvent;
  data: Record<string, unknown>;
  warn: (line: string) => void;
}

const pending = new Map<string, Pending[]>();
let scheduled = false;

/** Writes every entry waiting, project by project, in the order they came. */
export function flushRunEvents(): void {
  scheduled = false;
  for (const [projectRoot, items] of pending) {
    pending.delete(projectRoot);
    try {
      appendLedgerEntries(projectRoot, items);
    } catch (error) {
      items[0]!.warn(`ledger/plugins: ${items.map((i) => i.kind).join(', ')}: ${(error as Error).message}`);
    }
  }
}

function queueLedger(projectRoot: string, item: Pending): void {
  const items = pending.get(projectRoot);
  if (items) items.push(item);
  else pending.set(projectRoot, [item]);
  if (scheduled) return;
  scheduled = true;
  setImmediate(flushRunEvents);
}

process.on('exit', flushRunEvents);

export function runEventSink(projectRoot: string, env: NodeJS.ProcessEnv, warn: (line: string) => void): (event: RunEvent, data: Record<string, unknown>) => void {
  const ctx = sdkContext({ workspace: projectRoot, env });
  let hooked: boolean | null = null;
  return (event, data) => {
    try {
      if (LEDGERED.has(event)) queueLedger(projectRoot, { kind: event, data, warn });
      if ((pluginEvents as readonly string[]).includes(event)) {
        hooked ??= loadPlugins(ctx).plugins.some((p) => Object.keys(p.hooks).length > 0);
        if (hooked) {
          // A hook sees the ledger as it stands, and its own failure entries come after this event's.
          flushRunEvents();
          firePluginHook(ctx, event as (typeof pluginEvents)[number], data);
        }
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
