// What a person (or a program) sees while a run tree goes. Three modes:
// - tty: the tree (run → child runs → steps) redrawn in place with status,
//   phase, elapsed time and cost;
// - plain: one line per state change (CI logs, tests); steps of child runs
//   are prefixed with the child's role, `child 2 › build: succeeded`;
// - json: every event of every run record as one JSON line on stdout.
import { stepProgress } from '../loop/progress-text.ts';
import type { RunRecorder } from '../records/run-record.ts';
import { terminalText } from '../../text/terminal.ts';

export type ViewMode = 'tty' | 'plain' | 'json';

interface RunNodeView {
  id: string;
  title: string;
  prefix: string;
  depth: number;
  recorder: RunRecorder;
  parent: RunNodeView | null;
}

const ICON: Record<string, string> = {
  pending: '·',
  running: '▶',
  awaiting_gate: '?',
  succeeded: '✓',
  reused: '↺',
  failed: '✗',
  killed: '☠',
  conflict: '⚡',
  skipped: '-',
  cancelled: '■',
  over_budget: '$',
  fenced: '⊟',
  interrupted: '!',
};

function elapsed(started: string | null, ended: string | null, now: number): string {
  if (!started) return '';
  const secs = ((ended ? Date.parse(ended) : now) - Date.parse(started)) / 1000;
  return secs < 60 ? `${secs.toFixed(1)}s` : `${Math.floor(secs / 60)}m${Math.floor(secs % 60)}s`;
}

function cost(usage: { usd: number; usd_unknown?: true } | undefined): string {
  if (!usage) return '';
  const usd = usage.usd ? `$${usage.usd.toFixed(usage.usd < 1 ? 4 : 2)}` : '';
  return usage.usd_unknown ? `${usd ? `${usd} + ` : ''}usd unknown` : usd;
}

export class TreeView {
  private readonly runs: RunNodeView[] = [];
  private readonly byId = new Map<string, RunNodeView>();
  /** Steps told to wait for a slot, by prefix and label, with when the wait began: their start is told too. */
  private readonly waitingSince = new Map<string, number>();
  private drawn = 0;
  private paused = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly err: NodeJS.WriteStream,
    readonly mode: ViewMode,
  ) {
    if (mode === 'tty') {
      this.timer = setInterval(() => this.draw(), 250);
      this.timer.unref();
    }
  }

  /** Shows a run (the root, or a child under its parent) from its recorder's events. */
  addRun(recorder: RunRecorder, parentId: string | null, role: string | null): void {
    const parent = (parentId !== null && this.byId.get(parentId)) || null;
    const prefix = parent && role ? `${parent.prefix}${role} › ` : '';
    const node: RunNodeView = {
      id: recorder.run.id,
      title: role ? `${role}: ${recorder.run.recipe}` : recorder.run.recipe,
      prefix,
      depth: parent ? parent.depth + 1 : 0,
      recorder,
      parent,
    };
    // Children are drawn under their parent, in the parent's order of children (index order, not start order).
    let at = this.runs.length;
    if (parent) {
      // Each child's place in its parent's list, found once (a 500-wide parent adds 500 children).
      const index = new Map<string | null, number>();
      for (const [i, c] of (parent.recorder.run.children ?? []).entries()) if (!index.has(c.run_id)) index.set(c.run_id, i);
      const order = (n: RunNodeView): number => index.get(n.id) ?? -1;
      const mine = order(node);
      at = this.runs.indexOf(parent) + 1;
      while (at < this.runs.length && this.isUnder(this.runs[at]!, parent)) {
        const sibling = this.runs[at]!;
        if (sibling.parent === parent && order(sibling) > mine) break;
        at += 1;
      }
    }
    this.runs.splice(at, 0, node);
    this.byId.set(node.id, node);
    for (const e of this.pendingEvents(recorder)) this.onEvent(node, e);
    recorder.on('event', (e) => this.onEvent(node, e));
  }

  private isUnder(n: RunNodeView, ancestor: RunNodeView): boolean {
    for (let p = n.parent; p; p = p.parent) if (p === ancestor) return true;
    return false;
  }

  private pendingEvents(recorder: RunRecorder): Array<Record<string, unknown>> {
    // The recorder wrote run.started before the view subscribed.
    return [{ time: recorder.run.started, run: recorder.run.id, type: 'run.started', recipe: recorder.run.recipe, parent: recorder.run.parent ?? null }];
  }

  private onEvent(node: RunNodeView, e: Record<string, unknown>): void {
    if (this.mode === 'json') {
      this.out.write(`${JSON.stringify(e)}\n`);
      return;
    }
    if (this.mode === 'tty') {
      this.draw();
      return;
    }
    const time = new Date().toISOString().slice(11, 19);
    const waitKey = `${node.prefix}${String(e.step)}`;
    if (e.type === 'step.changed' && typeof e.slot_wait === 'string') {
      if (!this.waitingSince.has(waitKey)) this.waitingSince.set(waitKey, Date.now());
      this.out.write(terminalText(`${time} ${node.prefix}${String(e.step)}: ${e.slot_wait}\n`));
    } else if (e.type === 'step.changed' && e.slot_wait === null && e.status === undefined && this.waitingSince.has(waitKey)) {
      const waited = ((Date.now() - this.waitingSince.get(waitKey)!) / 1000).toFixed(1);
      this.waitingSince.delete(waitKey);
      this.out.write(`${time} ${node.prefix}${String(e.step)}: got its slot after ${waited}s; its agent starts\n`);
    } else if (e.type === 'step.changed' && typeof e.status === 'string') {
      const s = node.recorder.run.steps.find((x) => x.label === e.step);
      if (!s) return;
      if (s.status !== 'running') this.waitingSince.delete(waitKey); // ended while it waited (cancelled)
      const phase = s.phase > 0 ? ` phase ${s.phase}` : '';
      const took = s.started && s.ended ? ` ${elapsed(s.started, s.ended, Date.now())}` : '';
      const note = s.status !== 'succeeded' && s.status !== 'running' && s.reason ? ` — ${s.reason}` : '';
      this.out.write(terminalText(`${time} ${node.prefix}${s.label}: ${s.status}${phase}${took}${note}\n`));
    } else if (e.type === 'run.ended' && node.parent) {
      const run = node.recorder.run;
      this.out.write(terminalText(`${time} ${node.prefix.replace(/ › $/, '')}: ${run.status}${cost(run.usage) ? ` ${cost(run.usage)}` : ''}${run.reason ? ` — ${run.reason}` : ''}\n`));
    }
  }

  /** A line of its own: above the live tree, on stdout, or on stderr in json mode. */
  note(text: string): void {
    // Notes carry what agents wrote (a judge's reason, a conflict's files): no escape sequence of theirs reaches the terminal.
    const line = terminalText(text);
    if (this.mode === 'json') return void this.err.write(`${line}\n`);
    if (this.mode === 'plain' || this.stopped) return void this.out.write(`${line}\n`);
    this.clear();
    this.out.write(`${line}\n`);
    this.draw();
  }

  pause(): void {
    this.clear();
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.draw();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.mode === 'tty' && !this.stopped) {
      this.paused = false;
      this.draw();
      // The final tree stays on screen; later lines go below it.
      this.drawn = 0;
      this.stopped = true;
    }
  }

  private clear(): void {
    if (this.mode !== 'tty' || this.drawn === 0) return;
    this.out.write(`\x1b[${this.drawn}A\x1b[0J`);
    this.drawn = 0;
  }

  private draw(): void {
    if (this.mode !== 'tty' || this.paused || this.stopped) return;
    const now = Date.now();
    const lines: string[] = [];
    const width = Math.max(20, (this.out.columns || 120) - 1);
    for (const n of this.runs) {
      const run = n.recorder.run;
      const pad = '  '.repeat(n.depth);
      lines.push(`${pad}${ICON[run.status] ?? ' '} ${n.title}  ${run.status}  ${elapsed(run.started, run.ended, now)}  ${cost(run.usage)}`.trimEnd());
      // A finished child collapses to its own line; a running one shows its steps.
      if (n.parent && run.status !== 'running') continue;
      for (const s of run.steps) {
        const phase = s.phase > 0 ? `phase ${s.phase}` : '';
        // A loop's iteration and a usage-limit countdown, after the aligned columns.
        const progress = stepProgress(s, now);
        const status = s.slot_wait ? 'waiting' : s.status;
        const note = s.slot_wait ?? (s.reason && s.status !== 'succeeded' ? s.reason : '');
        lines.push(
          `${pad}  ${s.slot_wait ? '…' : (ICON[s.status] ?? ' ')} ${s.label.padEnd(16)} ${status.padEnd(13)} ${phase.padEnd(9)} ${elapsed(s.started, s.ended, now).padStart(7)} ${cost(s.usage).padStart(8)}${progress ? `  ${progress}` : ''}${note ? `  ${note}` : ''}`,
        );
      }
    }
    const shown = lines.slice(-Math.max(10, (this.out.rows || 40) - 2)).map((l) => terminalText(l.replaceAll('\n', ' ')).slice(0, width));
    this.clear();
    this.out.write(`${shown.join('\n')}\n`);
    this.drawn = shown.length;
  }
}
