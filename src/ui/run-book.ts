// Recipe runs as the dashboard's waterfalls: the `ai.vigil.recipe.run` and
// `ai.vigil.recipe.step` observations a run publishes (src/recipes/tree/finish.ts),
// folded into one record per run with its times, its role under its parent,
// the latest state of each step and, for a composite, the children it listed
// (entries that never ran among them). Read incrementally like the lease
// history: only what was committed since the last view (the first read looks
// at the monitor's last `seedRows`). Whole trees are kept or dropped: a
// composite is never shown without its children.
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';

const runType = 'ai.vigil.recipe.run';
const stepType = 'ai.vigil.recipe.step';
const seedRows = 2000;
const readLimit = 5000;
/** Runs kept per monitor, children included; past it the tree updated longest ago goes. */
const runsKept = 400;
const stepsKept = 100;
const entriesKept = 200;

export interface RunStep {
  label: string;
  status: string;
  backend: string | null;
  wave: number | null;
  started: string | null;
  ended: string | null;
  exit_code: number | null;
  reason: string | null;
  killed_by: string | null;
  usage: { input_tokens: number; output_tokens: number; usd: number; usd_unknown?: true } | null;
  /** The last lines of the step's output, sent once it ended. */
  log_tail: string | null;
}

/** A child a composite listed: run (with its run id), pending, or never run (skipped, cancelled). */
export interface RunEntry {
  role: string;
  name: string;
  run_id: string | null;
  status: string;
  started: string | null;
  ended: string | null;
  reason: string | null;
}

export interface RunRecord {
  /** Null for an entry of a composite that never ran (a pipeline entry skipped by its `on`). */
  id: string | null;
  recipe: string | null;
  /** The recipe type: sequence, pipeline, parallel, adversarial, … (null from an older publisher). */
  type: string | null;
  /** What this run is to its parent: `entry 2`, `child 0`, `red round 1`. */
  role: string | null;
  status: string;
  reason: string | null;
  parent: string | null;
  /** The run's budget (usd, tokens, minutes), when it has one. */
  budget: { usd?: number; tokens?: number; minutes?: number } | null;
  /** From the run record; an older publisher sent none, and then the first and last observation's times stand in. */
  started: string | null;
  ended: string | null;
  seen: string;
  updated: string;
  steps: RunStep[];
  /** The children a composite listed, in its order. */
  entries?: RunEntry[];
  children?: RunRecord[];
}

interface Book {
  upTo: number;
  runs: Map<string, RunRecord>;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const finished = (status: string) => status !== 'running' && status !== 'pending';

function entriesOf(value: unknown): RunEntry[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.slice(0, entriesKept).flatMap((e: Record<string, unknown>) =>
    e && typeof e === 'object' && typeof e.role === 'string'
      ? [{ role: e.role, name: str(e.name) ?? '?', run_id: str(e.run_id), status: str(e.status) ?? 'unknown', started: str(e.started), ended: str(e.ended), reason: str(e.reason) }]
      : [],
  );
}

export class RunBook {
  private readonly byFeed = new Map<number, Book>();

  constructor(private readonly service: MonitorService) {}

  /** The monitor's latest runs, newest first, each composite's children nested under it in its order. */
  of(feed: Feed): RunRecord[] {
    const book = this.read(feed);
    const byId = new Map<string, RunRecord>();
    for (const r of book.runs.values()) byId.set(r.id as string, { ...r, children: [] });
    const roots: RunRecord[] = [];
    for (const run of byId.values()) {
      const parent = run.parent ? byId.get(run.parent) : undefined;
      if (parent) parent.children?.push(run);
      else roots.push(run);
    }
    for (const run of byId.values()) run.children = ordered(run);
    return roots.sort((a, b) => (a.updated < b.updated ? 1 : -1));
  }

  private run(book: Book, id: string, time: string): RunRecord {
    let run = book.runs.get(id);
    if (!run) {
      run = { id, recipe: null, type: null, role: null, status: 'running', reason: null, parent: null, budget: null, started: null, ended: null, seen: time, updated: time, steps: [] };
      book.runs.set(id, run);
      if (book.runs.size > runsKept) dropOldestTree(book.runs);
    }
    run.updated = time;
    return run;
  }

  private read(feed: Feed): Book {
    let book = this.byFeed.get(feed.key);
    if (!book) {
      book = { upTo: Math.max(0, feed.committedHead - seedRows), runs: new Map() };
      this.byFeed.set(feed.key, book);
    }
    if (feed.committedHead <= book.upTo) return book;
    const rows = this.service.store.readFeed(feed.key, book.upTo + 1, readLimit, [{ types: [runType, stepType] }], feed.committedHead);
    for (const row of rows) {
      const o = JSON.parse(row.body) as { type: string; time: string; subject: string | null; data?: Record<string, unknown> };
      // A run publishes its own observations: their data is the record itself (bookkeeping would nest it in payload).
      const raw = (o.data ?? {}) as Record<string, unknown>;
      const d = (typeof raw.payload === 'object' && raw.payload !== null ? raw.payload : raw) as Record<string, unknown>;
      if (o.type === runType && o.subject) {
        const run = this.run(book, o.subject, o.time);
        run.recipe = str(d.recipe) ?? run.recipe;
        run.type = str(d.type) ?? run.type;
        run.role = str(d.role) ?? run.role;
        run.status = str(d.status) ?? run.status;
        run.reason = str(d.reason);
        run.parent = str(d.parent) ?? run.parent;
        run.started = str(d.started) ?? run.started ?? run.seen;
        run.ended = str(d.ended) ?? (finished(run.status) ? o.time : null);
        run.entries = entriesOf(d.children) ?? run.entries;
        if (typeof d.budget === 'object' && d.budget !== null) run.budget = d.budget as RunRecord['budget'];
      } else if (o.type === stepType && typeof d.run === 'string' && typeof d.label === 'string') {
        const run = this.run(book, d.run, o.time);
        run.recipe = run.recipe ?? str(d.recipe);
        const step: RunStep = {
          label: d.label,
          status: str(d.status) ?? 'unknown',
          backend: str(d.backend),
          wave: typeof d.wave === 'number' ? d.wave : null,
          started: str(d.started),
          ended: str(d.ended),
          exit_code: typeof d.exit_code === 'number' ? d.exit_code : null,
          reason: str(d.reason),
          killed_by: str(d.killed_by),
          usage: typeof d.usage === 'object' && d.usage !== null ? (d.usage as RunStep['usage']) : null,
          log_tail: str(d.log_tail),
        };
        const at = run.steps.findIndex((s) => s.label === step.label);
        if (at === -1) {
          if (run.steps.length < stepsKept) run.steps.push(step);
        } else run.steps[at] = step;
      }
    }
    book.upTo = rows.length === readLimit ? (rows.at(-1)?.seq ?? feed.committedHead) : feed.committedHead;
    return book;
  }
}

/**
 * A composite's children in the order it listed them (its entries), each entry
 * that never ran as a record without an id; children it did not list (an
 * older publisher, a list cut short) follow by their start.
 */
function ordered(run: RunRecord): RunRecord[] {
  const startOf = (r: RunRecord) => r.started ?? r.seen;
  const kids = [...(run.children ?? [])].sort((a, b) => (startOf(a) < startOf(b) ? -1 : startOf(a) > startOf(b) ? 1 : 0));
  if (!run.entries?.length) return kids;
  const byId = new Map(kids.map((k) => [k.id, k]));
  const byRole = new Map(kids.filter((k) => k.role).map((k) => [k.role, k]));
  const out: RunRecord[] = [];
  const placed = new Set<RunRecord>();
  for (const e of run.entries) {
    const kid = (e.run_id ? byId.get(e.run_id) : undefined) ?? byRole.get(e.role);
    if (kid && !placed.has(kid)) {
      kid.role ??= e.role;
      out.push(kid);
      placed.add(kid);
    } else if (!kid && !e.run_id) {
      // Never started: a pipeline entry skipped by its `on`, a child cancelled before it began.
      out.push({ id: null, recipe: e.name, type: null, role: e.role, status: e.status, reason: e.reason, parent: run.id, budget: null, started: e.started, ended: e.ended, seen: run.seen, updated: run.updated, steps: [], children: [] });
    }
  }
  for (const k of kids) if (!placed.has(k)) out.push(k);
  return out;
}

/** Drops the tree (a root run and everything under it) that was updated longest ago. */
function dropOldestTree(runs: Map<string, RunRecord>): void {
  const rootOf = (run: RunRecord): string => {
    let at = run;
    for (let hops = 0; hops < 32 && at.parent && runs.has(at.parent); hops++) at = runs.get(at.parent) as RunRecord;
    return at.id as string;
  };
  const latest = new Map<string, string>();
  for (const run of runs.values()) {
    const root = rootOf(run);
    const seen = latest.get(root);
    if (seen === undefined || run.updated > seen) latest.set(root, run.updated);
  }
  let oldest: string | undefined;
  for (const [root, updated] of latest) if (oldest === undefined || updated < (latest.get(oldest) as string)) oldest = root;
  const gone = [...runs.values()].filter((run) => rootOf(run) === oldest).map((run) => run.id as string);
  for (const id of gone) runs.delete(id);
}
