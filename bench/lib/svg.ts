// A small SVG line-chart renderer for the scaling curves: x on a log scale
// (the points are 1, 10, 50, 200 …), two y axes (a rate on the left, a
// latency on the right), each starting at zero so that growth reads true.

export interface Series {
  name: string;
  unit: string;
  values: number[];
  axis: 'left' | 'right';
  colour: string;
  dashed?: boolean;
}

export interface Chart {
  title: string;
  xLabel: string;
  xs: number[];
  series: Series[];
}

const width = 480;
const height = 320;
const margin = { left: 72, right: 72, top: 52, bottom: 56 };
const ticks = 5;

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const short = (n: number) => (n >= 1000 ? `${Math.round(n / 100) / 10}k`.replace('.0k', 'k') : String(Math.round(n * (n < 10 ? 100 : 10)) / (n < 10 ? 100 : 10)));

/** The smallest 1, 2 or 5 × 10^k at or above `max` (at least `max` > 0). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/** The top of each y axis: the highest value over the charts given, rounded up with headroom for its label. */
function axisTops(charts: Chart[]): { left: number; right: number } {
  const top = { left: 0, right: 0 };
  for (const c of charts) for (const s of c.series) top[s.axis] = Math.max(top[s.axis], ...s.values.filter(Number.isFinite));
  return { left: niceMax(top.left * 1.1), right: niceMax(top.right * 1.1) };
}

function chart(c: Chart, dx: number, dy: number, max: { left: number; right: number }): string {
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const [lo, hi] = [Math.log10(Math.min(...c.xs)), Math.log10(Math.max(...c.xs))];
  // Points are inset from the axes so that their labels clear the tick labels.
  const inset = 28;
  const x = (v: number) => margin.left + inset + (hi === lo ? (plotW - 2 * inset) / 2 : ((Math.log10(v) - lo) / (hi - lo)) * (plotW - 2 * inset));
  const y = (v: number, axis: 'left' | 'right') => margin.top + plotH - (v / max[axis]) * plotH;
  const out: string[] = [`<g transform="translate(${dx},${dy})">`];
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-weight="bold">${escapeXml(c.title)}</text>`);
  out.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  for (let i = 0; i <= ticks; i++) {
    const yy = margin.top + plotH - (i / ticks) * plotH;
    out.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${yy}" y2="${yy}" stroke="#eee"/>`);
    for (const axis of ['left', 'right'] as const) {
      const s = c.series.find((v) => v.axis === axis);
      if (!s) continue;
      const xx = axis === 'left' ? margin.left - 6 : margin.left + plotW + 6;
      out.push(`<text x="${xx}" y="${yy + 4}" text-anchor="${axis === 'left' ? 'end' : 'start'}" fill="${s.colour}">${short((i / ticks) * max[axis])}</text>`);
    }
  }
  for (const v of c.xs) {
    out.push(`<line x1="${x(v)}" x2="${x(v)}" y1="${margin.top + plotH}" y2="${margin.top + plotH + 5}" stroke="#999"/>`);
    out.push(`<text x="${x(v)}" y="${margin.top + plotH + 18}" text-anchor="middle">${v}</text>`);
  }
  out.push(`<text x="${margin.left + plotW / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(c.xLabel)} (log scale)</text>`);
  for (const axis of ['left', 'right'] as const) {
    const s = c.series.find((v) => v.axis === axis);
    if (!s) continue;
    const xx = axis === 'left' ? 16 : width - 12;
    const yy = margin.top + plotH / 2;
    out.push(`<text transform="translate(${xx},${yy}) rotate(${axis === 'left' ? -90 : 90})" text-anchor="middle" fill="${s.colour}">${escapeXml(`${s.name} (${s.unit})`)}</text>`);
  }
  for (const s of c.series) {
    const points = c.xs.map((v, i) => [x(v), y(s.values[i]!, s.axis)] as const).filter(([, yy]) => Number.isFinite(yy));
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(`<polyline fill="none" stroke="${s.colour}" stroke-width="2"${dash} points="${points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`);
    for (const [i, [a, b]] of points.entries()) {
      out.push(`<circle cx="${a.toFixed(1)}" cy="${b.toFixed(1)}" r="3.5" fill="${s.colour}"/>`);
      // The upper of the series at this x is labelled above its point, the others below (unless that leaves the plot).
      const others = c.series.filter((o) => o !== s).map((o) => y(o.values[i]!, o.axis));
      const upper = others.every((o) => !(o < b));
      const ly = upper || b + 16 > margin.top + plotH ? b - 8 : b + 16;
      out.push(`<text x="${a.toFixed(1)}" y="${ly.toFixed(1)}" text-anchor="middle" font-size="10" fill="${s.colour}">${short(s.values[i]!)}</text>`);
    }
  }
  c.series.forEach((s, i) => {
    const lx = margin.left + i * 150;
    const ly = margin.top - 10;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    out.push(`<text x="${lx + 27}" y="${ly}" font-size="11">${escapeXml(s.name)}</text>`);
  });
  out.push('</g>');
  return out.join('\n');
}

/**
 * Charts side by side with a caption line under them; the titles and caption
 * are also the SVG's title. The charts share their y scales, so that side by
 * side they compare.
 */
export function renderCharts(charts: Chart[], caption: string): string {
  const total = width * charts.length;
  const max = axisTops(charts);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${total}" height="${height + 30}" viewBox="0 0 ${total} ${height + 30}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(`${charts.map((c) => c.title).join('; ')}. ${caption}`)}</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...charts.map((c, i) => chart(c, i * width, 0, max)),
    `<text x="${total / 2}" y="${height + 18}" text-anchor="middle" font-size="11" fill="#444">${escapeXml(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
