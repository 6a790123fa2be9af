// What a person sees while a run goes: in a terminal, one line per step
// (state, phase, elapsed) redrawn in place; otherwise one plain line per
// state change, which reads well in CI logs and in tests.
export interface ViewStep {
  label: string;
  status: string;
  phase: number;
  started: number | null;
  ended: number | null;
  note?: string;
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
};

function elapsed(s: ViewStep, now: number): string {
  if (s.started === null) return '';
  const secs = ((s.ended ?? now) - s.started) / 1000;
  return secs < 60 ? `${secs.toFixed(1)}s` : `${Math.floor(secs / 60)}m${Math.floor(secs % 60)}s`;
}

export class LiveView {
  private readonly steps = new Map<string, ViewStep>();
  private drawn = 0;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly tty: boolean,
    labels: string[],
  ) {
    for (const label of labels) this.steps.set(label, { label, status: 'pending', phase: 0, started: null, ended: null });
    if (tty) {
      this.timer = setInterval(() => this.draw(), 250);
      this.timer.unref();
    }
  }

  update(label: string, patch: Partial<ViewStep>): void {
    const s = this.steps.get(label);
    if (!s) return;
    const changed = patch.status !== undefined && patch.status !== s.status;
    Object.assign(s, patch);
    if (this.tty) this.draw();
    else if (changed) {
      const phase = s.phase > 0 ? ` phase ${s.phase}` : '';
      const time = s.ended !== null ? ` ${elapsed(s, Date.now())}` : '';
      this.out.write(`${new Date().toISOString().slice(11, 19)} ${label}: ${s.status}${phase}${time}${s.note ? ` — ${s.note}` : ''}\n`);
    }
  }

  /** A line above the step table (or just a line, without a terminal). */
  note(line: string): void {
    if (!this.tty) {
      this.out.write(`${line}\n`);
      return;
    }
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
    if (this.tty) {
      this.paused = false;
      this.draw();
    }
  }

  private clear(): void {
    if (!this.tty || this.drawn === 0) return;
    this.out.write(`\x1b[${this.drawn}A\x1b[0J`);
    this.drawn = 0;
  }

  private draw(): void {
    if (!this.tty || this.paused) return;
    const now = Date.now();
    const width = Math.max(...[...this.steps.keys()].map((l) => l.length), 5);
    const lines = [...this.steps.values()].map((s) => {
      const phase = s.phase > 0 ? `phase ${s.phase}` : '';
      const text = `${ICON[s.status] ?? ' '} ${s.label.padEnd(width)}  ${s.status.padEnd(13)} ${phase.padEnd(9)} ${elapsed(s, now).padStart(7)}${s.note ? `  ${s.note}` : ''}`;
      return text.slice(0, Math.max(20, (this.out.columns || 120) - 1));
    });
    this.clear();
    this.out.write(`${lines.join('\n')}\n`);
    this.drawn = lines.length;
  }
}
