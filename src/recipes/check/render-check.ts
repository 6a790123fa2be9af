// `vigil recipe check` for people: one block per recipe of the tree, one line
// per verdict, the details indented under it, and the overall verdict last.
import type { CheckReport } from './check-recipe.ts';

const mark = { ok: 'ok     ', warning: 'warning', refused: 'REFUSED' } as const;

export function renderCheck(report: CheckReport): string {
  const out: string[] = [];
  for (const r of report.recipes) {
    out.push(`${r.via ? `${r.via} → ` : ''}${r.type} "${r.name}"${r.file ? ` (${r.file})` : ''}`);
    for (const s of r.sections) {
      out.push(`  ${s.name.padEnd(11)} ${mark[s.status]}  ${s.summary}`);
      for (const line of s.lines) out.push(`      - ${line}`);
    }
  }
  const runner = ['temporal', 'sentinel'].includes(report.recipes[0]?.type ?? '') ? 'vigil daemon' : 'vigil sequence';
  const refused = report.recipes.flatMap((r) => r.sections.filter((s) => s.status === 'refused').map((s) => `${s.name} of "${r.name}"`));
  out.push(
    refused.length === 0
      ? `recipe "${report.recipe}": clean; ${runner} would start it (nothing was run)`
      : `recipe "${report.recipe}": refused (${refused.join(', ')}); ${runner} would not start it (nothing was run)`,
  );
  return `${out.join('\n')}\n`;
}
