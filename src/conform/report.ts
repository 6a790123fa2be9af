// The human-readable report: one row per check (its id marked * when it
// rests on a rule of Vigil's own rather than the base specification), then
// the summary line.
import type { ConformReport } from './runner.ts';

export function formatReport(report: ConformReport, width = 100): string {
  const rows = report.checks.map((c) => [c.basis === 'vigil' ? `${c.id}*` : c.id, c.name, c.skipped ? 'skip' : c.ok ? 'pass' : 'FAIL', c.reason]);
  const idWidth = Math.max(2, ...rows.map((r) => r[0]!.length));
  const nameWidth = Math.min(Math.max(40, width - idWidth - 40), Math.max(4, ...rows.map((r) => r[1]!.length)));
  const pad = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text.padEnd(n));
  const line = (r: string[]) => {
    const head = `${pad(r[0]!, idWidth)}  ${pad(r[1]!, nameWidth)}  ${pad(r[2]!, 4)}`;
    // A failure's reason is the point of the report: shown whole, never cut.
    const room = r[2] === 'FAIL' ? Number.POSITIVE_INFINITY : Math.max(40, width - head.length - 2);
    return r[3] ? `${head}  ${oneLine(r[3], room)}` : head;
  };
  const out = [line(['id', 'name', 'ok', 'reason']), ...rows.map(line)];
  const skipped = report.skipped > 0 ? `, ${report.skipped} skipped` : '';
  const marked = report.checks.some((c) => c.basis === 'vigil') ? ['* a rule of Vigil\'s own, stricter than the base specification (--spec-only leaves these out)'] : [];
  out.push('', ...marked, `${report.passed} passed, ${report.failed} failed${skipped} (${report.base})`);
  return `${out.join('\n')}\n`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
