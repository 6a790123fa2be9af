// Recipe runs as the dashboard's waterfalls: the `ai.vigil.recipe.run` and
// `ai.vigil.recipe.step` observations a run publishes (src/recipes/publish),
// folded into one record per run with the latest state of each step. Read
// incrementally like the lease history: only what was committed since the
// last view (the first read looks at the monitor's last `seedRows`).
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';

const runType = 'ai.vigil.recipe.run';
const stepType = 'ai.vigil.recipe.step';
const seedRows = 2000;
const readLimit = 5000;
const runsKept = 20;
const stepsKept = 100;

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
}

export interface RunRecord {
  id: string;
  recipe: string | null;
  status: string;
  reason: string | null;
  parent: string | null;
  seen: string;
  updated: string;
  steps: RunStep[];
  children?: RunRecord[];
}

interface Book {
  upTo: number;
  runs: Map<string, RunRecord>;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export class RunBook {
  private readonly byFeed = new Map<number, Book>();

  constructor(private readonly service: MonitorService) {}

  /** The monitor's latest runs, newest first, each composite's children nested under it. */
  of(feed: Feed): RunRecord[] {
    const book = this.read(feed);
    const all = [...book.runs.values()];
    const byId = new Map(all.map((r) => [r.id, { ...r, children: [] as RunRecord[] }]));
    const roots: RunRecord[] = [];
    for (const run of byId.values()) {
      const parent = run.parent ? byId.get(run.parent) : undefined;
      if (parent) parent.children?.push(run);
      else roots.push(run);
    }
    return roots.sort((a, b) => (a.updated < b.updated ? 1 : -1));
  }

  private run(book: Book, id: string, time: string): RunRecord {
    let run = book.runs.get(id);
    if (!run) {
      run = { id, recipe: null, status: 'running', reason: null, parent: null, seen: time, updated: time, steps: [] };
      book.runs.set(id, run);
      if (book.runs.size > runsKept) {
        const oldest = [...book.runs.values()].sort((a, b) => (a.updated < b.updated ? -1 : 1))[0];
        if (oldest) book.runs.delete(oldest.id);
      }
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
        run.status = str(d.status) ?? run.status;
        run.reason = str(d.reason);
        run.parent = str(d.parent) ?? run.parent;
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
