// The bench's own arithmetic (no server, no timing): the latency histogram's
// percentiles, the table pairing a transport's figures, the pass/fail
// summary and the scaling chart's markup.
import { describe, expect, it } from 'vitest';
import { merge, percentileOf, record } from '../../bench/lib/histogram.ts';
import { Report } from '../../bench/lib/report.ts';
import { niceMax, renderCharts } from '../../bench/lib/svg.ts';

describe('latency histogram', () => {
  it('gives percentiles within its 2% bucket width, over merged histograms', () => {
    const a = {};
    const b = {};
    for (let i = 1; i <= 990; i++) record(a, 1);
    for (let i = 1; i <= 10; i++) record(b, 100);
    const h = merge([a, b]);
    expect(percentileOf(h, 50)).toBeGreaterThanOrEqual(1);
    expect(percentileOf(h, 50)).toBeLessThan(1.02);
    expect(percentileOf(h, 99)).toBeLessThan(1.02);
    expect(percentileOf(h, 99.5)).toBeGreaterThanOrEqual(100);
    expect(percentileOf(h, 99.5)).toBeLessThan(102);
    expect(percentileOf({}, 99)).toBeNaN();
  });
});

describe('report', () => {
  it('puts the node:http figure next to the uWS one and judges the target on uWS', () => {
    const report = new Report(() => {});
    const figure = { scenario: '1 publish', figure: '50 clients', unit: 'obs/s', target: '≥ 30,000 obs/s' };
    report.add('uws', { ...figure, value: 40_000, met: true });
    report.add('node', { ...figure, value: 20_000, met: false });
    report.add('uws', { scenario: '5 wake', figure: 'p99', value: 7, unit: 'ms', target: 'p99 < 5 ms', met: false });
    report.add('uws', { scenario: '7 memory', figure: 'RSS', value: 300, unit: 'MB', target: '< 400 MB at 100,000', met: '20,000 created' });
    expect(report.rows).toHaveLength(3);
    const row = report.table().split('\n').find((line) => line.includes('50 clients'))!;
    expect(row).toContain('40,000 obs/s');
    expect(row).toContain('20,000 obs/s');
    expect(row).toContain('×0.5');
    expect(row).toContain('PASS');
    const summary = report.summary();
    expect(summary).toMatch(/^targets: 1 met, 1 missed, 1 not judged in this run/);
    expect(summary).toContain('missed: 5 wake, p99 (p99 < 5 ms)');
  });

  it('names the part of a two-part target that was missed', () => {
    const report = new Report(() => {});
    report.add('uws', { scenario: '1 publish', figure: '50 clients', value: 6000, unit: 'obs/s', target: '≥ 0.75 of discover and ≥ 30,000 obs/s', met: false, missedPart: 'rate < 30,000' });
    expect(report.table()).toContain('FAIL: rate < 30,000');
  });

  it('keeps a figure measured only on node:http', () => {
    const report = new Report(() => {});
    report.add('node', { scenario: '3 SSE', figure: 'deliveries per second', value: 100, unit: '/s' });
    report.add('node', { scenario: '5 wake', figure: 'p99', value: 3, unit: 'ms', target: 'p99 < 5 ms', met: true });
    expect(report.table()).toContain('| 100 /s');
    expect(report.table()).toContain('PASS (node:http)');
    expect(report.summary()).toBe('targets: 1 met, 0 missed');
  });
});

describe('scaling chart', () => {
  it('rounds axes up to 1, 2 or 5 × 10^k and escapes its text', () => {
    expect([niceMax(0.7), niceMax(1), niceMax(13), niceMax(4200), niceMax(0)]).toEqual([1, 1, 20, 5000, 1]);
    const svg = renderCharts(
      [{ title: 'rate & p99', xLabel: 'connections', xs: [1, 10], series: [{ name: 'rate', unit: 'obs/s', values: [1, 2], axis: 'left', colour: '#000' }] }],
      'commit <abc>',
    );
    expect(svg).toContain('<title>rate &amp; p99. commit &lt;abc&gt;</title>');
    expect(svg).toContain('<polyline');
    expect(svg).not.toContain('NaN');
  });
});
