// The shared counters a step's reader adds each usage report to: a report
// beyond any budget (an agent printing 1e30 tokens or $1e300) must still
// cross every budget, not wrap a 64-bit counter below zero or throw.
import { describe, expect, it } from 'vitest';
import { meterReport, newMeter, readMeter } from '../../src/recipes/budget/usage-meter.ts';

const report = (input_tokens: number, usd: number | null) => ({ input_tokens, output_tokens: 0, usd, model: null });

describe('usage meter', () => {
  it('counts an absurd report as crossing every budget', () => {
    const tokens = newMeter('run r', { tokens: 1000 });
    expect(meterReport([tokens], report(1e30, 0.01), undefined)).toMatchObject({ limit: 'tokens', allowed: 1000 });
    expect(readMeter(tokens).input_tokens).toBeGreaterThan(1000);

    const dollars = newMeter('run r', { usd: 5 });
    expect(meterReport([dollars], report(10, 1e300), undefined)).toMatchObject({ limit: 'usd', allowed: 5 });
    expect(readMeter(dollars).usd).toBeGreaterThan(5);
  });

  it('keeps counting after many of them, and ignores what is not a number', () => {
    const meter = newMeter('run r', { tokens: 1e15 });
    for (let i = 0; i < 1000; i += 1) meterReport([meter], report(1e30, null), undefined);
    expect(readMeter(meter).input_tokens).toBe(1e18);
    meterReport([meter], report(Number.NaN, Number.NaN), undefined);
    expect(readMeter(meter)).toMatchObject({ input_tokens: 1e18, usd: 0 });
  });
});
