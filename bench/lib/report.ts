// The results table. A scenario adds a row per figure for the transport it
// ran on; the node:http figure lands next to the uWS one in the same row, so
// the table shows what each transport gives. Targets are judged on uWS (the
// default transport; on node:http only in a --transport node run); a row
// whose target is not judged in this run (e.g. a --quick run at smaller
// counts) says so.
import { round } from './stats.ts';

export type Transport = 'uws' | 'node';

export interface Figure {
  scenario: string;
  figure: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number; unit: string };
  ratio?: number;
  target?: string;
  /** true, false, or a reason it was not judged. */
  met?: boolean | string;
  /** For a target of several parts: which part failed. */
  missedPart?: string;
}

export interface Row extends Figure {
  node?: { value: number; baseline?: number; ratio?: number; met?: boolean | string };
}

export const fmt = (n: number): string =>
  Number.isFinite(n) ? (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : String(round(n, 2))) : 'n/a';

export const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

export class Report {
  readonly rows: Row[] = [];
  readonly notes: string[] = [];

  /** `progress` gets a line per figure as it is measured (stderr by default). */
  constructor(private readonly progress: (line: string) => void = log) {}

  add(transport: Transport, figure: Figure): void {
    const base = figure.baseline ? `  (baseline ${figure.baseline.name}: ${fmt(figure.baseline.value)} ${figure.baseline.unit}; ratio ${figure.ratio})` : '';
    this.progress(`${figure.scenario} / ${figure.figure} [${transport}]: ${fmt(figure.value)} ${figure.unit}${base}`);
    const existing = this.rows.find((r) => r.scenario === figure.scenario && r.figure === figure.figure);
    if (transport === 'uws') {
      if (existing) Object.assign(existing, figure);
      else this.rows.push({ ...figure });
      return;
    }
    const node = { value: figure.value, baseline: figure.baseline?.value, ratio: figure.ratio, met: figure.met };
    if (existing) existing.node = node;
    else this.rows.push({ ...figure, value: Number.NaN, ratio: undefined, met: undefined, node });
  }

  note(line: string): void {
    this.notes.push(line);
  }

  /** The table as Markdown, padded so that it also reads as plain text. */
  table(): string {
    const header = ['scenario', 'figure', 'uWS', 'node:http', 'node/uWS', 'yardstick (same run)', 'ratio', 'target', 'met'];
    const cells = this.rows.map((r) => {
      const nodeRatio = r.node && Number.isFinite(r.value) && r.value !== 0 ? `×${round(r.node.value / r.value, 2)}` : '';
      const baseline = r.baseline
        ? `${r.baseline.name}: ${fmt(r.baseline.value)}${r.node?.baseline !== undefined && r.node.baseline !== r.baseline.value ? ` (node ${fmt(r.node.baseline)})` : ''} ${r.baseline.unit}`
        : '';
      const ratio = r.ratio === undefined ? (r.node?.ratio === undefined ? '' : `node ${r.node.ratio}`) : `${r.ratio}${r.node?.ratio !== undefined ? ` (node ${r.node.ratio})` : ''}`;
      return [
        r.scenario,
        r.figure,
        Number.isFinite(r.value) ? `${fmt(r.value)} ${r.unit}` : '',
        r.node ? `${fmt(r.node.value)} ${r.unit}` : '',
        nodeRatio,
        baseline,
        ratio,
        r.target ?? '',
        Number.isFinite(r.value) ? (r.met === false && r.missedPart ? `FAIL: ${r.missedPart}` : verdict(r.met)) : r.node?.met === undefined ? '' : `${verdict(r.node.met)} (node:http)`,
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
  }

  /** How many targets were met, missed and not judged, then a line per missed one. */
  summary(): string {
    const judged = this.rows.filter((r) => r.target !== undefined);
    const metOf = (r: Row) => (Number.isFinite(r.value) ? r.met : r.node?.met);
    const met = judged.filter((r) => metOf(r) === true);
    const missed = judged.filter((r) => metOf(r) === false);
    const open = judged.length - met.length - missed.length;
    const names = missed.map((r) => `\n  missed: ${r.scenario}, ${r.figure} (${r.target})`);
    return `targets: ${met.length} met, ${missed.length} missed${open ? `, ${open} not judged in this run` : ''}${names.join('')}`;
  }
}

function verdict(met: boolean | string | undefined): string {
  if (met === undefined) return '';
  if (met === true) return 'PASS';
  if (met === false) return 'FAIL';
  return `not judged: ${met}`;
}
