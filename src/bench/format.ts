// Number and table formatting shared by the summaries, the progress line and
// the report.

export function num(n: number | undefined, digits = 0): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  if (Math.abs(n) >= 100 || digits === 0) return Math.round(n).toLocaleString('en-US');
  return n.toFixed(digits);
}

/** Milliseconds with sensible precision. */
export function ms(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  if (n >= 10_000) return `${(n / 1000).toFixed(1)} s`;
  if (n >= 100) return `${Math.round(n)} ms`;
  if (n >= 1) return `${n.toFixed(1)} ms`;
  return `${n.toFixed(2)} ms`;
}

export function rate(n: number | undefined, unit: string): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  return `${n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1)} ${unit}`;
}

/** Rows of cells, padded into columns. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, indent = '  ', leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    indent +
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${num(n)} ${n === 1 ? one : many}`;
