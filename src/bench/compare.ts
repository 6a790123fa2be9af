// --compare: the same scenario, with the same seed, against a second server
// right after the first; each headline figure side by side with its ratio
// (second / first), and which way is better.
import { ms, num, table } from './format.ts';

export interface KeyFigure {
  name: string;
  value: number;
  /** How the value is shown. */
  show: (n: number) => string;
  better: 'higher' | 'lower';
}

export interface Comparison {
  first: string;
  second: string;
  rows: Array<{ name: string; first: number; second: number; ratio: number; better: 'higher' | 'lower'; firstText: string; secondText: string }>;
}

export const perSecond = (n: number): string => `${num(n, 1)}/s`;
export const count = (n: number): string => num(n);
export const millis = (n: number): string => ms(n);

export function compare(first: { label: string; figures: KeyFigure[] }, second: { label: string; figures: KeyFigure[] }): Comparison {
  const rows = first.figures.map((f) => {
    const other = second.figures.find((s) => s.name === f.name);
    const value = other?.value ?? Number.NaN;
    return { name: f.name, first: f.value, second: value, ratio: f.value === 0 ? (value === 0 ? 1 : Number.POSITIVE_INFINITY) : value / f.value, better: f.better, firstText: f.show(f.value), secondText: f.show(value) };
  });
  return { first: first.label, second: second.label, rows };
}

export function comparisonText(c: Comparison): string {
  const ratio = (r: number) => (Number.isFinite(r) ? `×${r >= 10 ? r.toFixed(1) : r.toFixed(2)}` : r === Number.POSITIVE_INFINITY ? '×∞' : '–');
  const rows = c.rows.map((r) => [r.name, r.firstText, r.secondText, ratio(r.ratio), r.better === 'higher' ? 'higher is better' : 'lower is better']);
  return `comparison (second / first; same scenario and seed)\n  first:  ${c.first}\n  second: ${c.second}\n${table(['figure', 'first', 'second', 'ratio', ''], rows)}\n`;
}
