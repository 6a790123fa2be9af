// The HTML report (--report <file.html>): one self-contained page, styles
// and SVG charts inline, nothing fetched, so it opens offline and can be
// mailed. Each run is a section (report-leases.ts, report-streams.ts); a
// comparison table follows when --compare ran.
import { esc } from './charts.ts';
import type { Comparison } from './compare.ts';
import type { BenchSpec } from './spec.ts';

export interface ReportSection {
  title: string;
  /** HTML of the section's body. */
  html: string;
}

const style = `
body { font: 14px/1.45 system-ui, sans-serif; color: #111827; margin: 24px auto; max-width: 940px; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; } p.note { color: #4b5563; margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; } td, th { padding: 3px 10px; border-bottom: 1px solid #f3f4f6; text-align: right; }
td:first-child, th:first-child { text-align: left; } table.facts td { text-align: left; } th { color: #374151; font-weight: 600; }
.bad { color: #b91c1c; font-weight: 600; } .ok { color: #15803d; font-weight: 600; } .warn { color: #92400e; }
pre { background: #f9fafb; border: 1px solid #e5e7eb; padding: 8px; overflow-x: auto; font-size: 12px; }
svg { display: block; max-width: 100%; height: auto; margin: 4px 0 8px; }
`;

export function reportPage(spec: BenchSpec, sections: ReportSection[], comparison: Comparison | undefined): string {
  const compared = comparison
    ? `<h2>Comparison</h2><p class="note">The same scenario with the same seed, second server over first.</p><table><tr><th>figure</th><th>first</th><th>second</th><th>ratio</th><th></th></tr>${comparison.rows
        .map((r) => `<tr><td>${esc(r.name)}</td><td>${esc(r.firstText)}</td><td>${esc(r.secondText)}</td><td>${Number.isFinite(r.ratio) ? `×${r.ratio.toFixed(2)}` : '–'}</td><td>${r.better} is better</td></tr>`)
        .join('')}</table>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>vigil bench ${esc(spec.kind)}</title><style>${style}</style></head>
<body><h1>vigil bench ${esc(spec.kind)}</h1>
<p class="note">Written ${esc(new Date().toISOString())}. Every figure is judged from the clients' own records (send and answer times on one monotonic clock), never from what the server says of itself. Rates on a shared machine move with its load: the load average is given beside them.</p>
${sections.map((s) => `<h2>${esc(s.title)}</h2>${s.html}`).join('\n')}
${compared}
</body></html>
`;
}

/** A two-column table of label → value (values are already escaped HTML). */
export function factTable(rows: Array<[string, string]>): string {
  return `<table class="facts">${rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>`;
}
