// The flags of `vigil bench`, checked in-process: defaults, and a refusal for
// every bad value that names the flag and what it allows (the CLI turns these
// into exit 2; test/bench/bench-leases.test.ts runs one through it).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBenchFlags, reportFile } from '../../src/bench/flags.ts';
import { holdFlag, skewFlag } from '../../src/bench/spec.ts';

const base = { base: ['http://127.0.0.1:8130'] };

describe('vigil bench flags', () => {
  it('gives leases its defaults and reads the shapes', () => {
    const spec = parseBenchFlags('leases', { ...base, seed: ['5'] });
    expect(spec).toMatchObject({ kind: 'leases', mode: 'named', clients: 50, subjects: 100, skew: { kind: 'uniform' }, hold: { minMs: 10, maxMs: 10 }, durationMs: 10_000, leaseSeconds: 2, renewMs: 667, crash: 0, seed: 5, bases: ['http://127.0.0.1:8130/mp/v0'] });
    expect(skewFlag('zipf:1.1')).toEqual({ kind: 'zipf', s: 1.1 });
    expect(skewFlag('hot:0.5')).toEqual({ kind: 'hot', fraction: 0.5 });
    expect(holdFlag('20ms-2s')).toEqual({ minMs: 20, maxMs: 2000 });
    expect(parseBenchFlags('leases', { ...base, cycles: ['500'] })).toMatchObject({ cycles: 500, durationMs: undefined });
    expect(parseBenchFlags('leases', { ...base, mode: ['next'] })).toMatchObject({ mode: 'next', subjects: 10_000 });
    expect(parseBenchFlags('fanout', { ...base, reconnectStorm: true, duration: ['6s'] })).toMatchObject({ kind: 'fanout', streams: 100, subscriptions: 100, stormAtMs: 3000 });
    expect(parseBenchFlags('publish', { ...base, size: ['4KB'] })).toMatchObject({ kind: 'publish', connections: 50, size: 4096 });
  });

  it.each([
    ['leases', { skew: ['zipf:x'] }, '--skew takes uniform, zipf:<s>'],
    ['leases', { streams: ['5'] }, '--streams is a flag of vigil bench fanout, not of leases'],
    ['fanout', { clients: ['5'] }, '--clients is a flag of vigil bench leases, not of fanout'],
    ['leases', { crash: ['1.5'] }, '--crash takes a fraction from 0 to 1 (e.g. 0.05); got "1.5"'],
    ['leases', { crash: ['0.6'], stall: ['0.6'] }, '--crash and --stall are shares of the holds and add up to at most 1'],
    ['leases', { hold: ['200ms-20ms'] }, '--hold: the range must go from the shorter to the longer hold'],
    ['leases', { hold: ['soon'] }, '--hold takes a duration (50ms) or a range (20ms-200ms)'],
    ['leases', { leaseSeconds: ['1'], renew: ['2s'] }, '--renew must be shorter than the lease'],
    ['leases', { leaseSeconds: ['0'] }, '--lease-seconds takes a whole number from 1 to 86,400; got "0"'],
    ['leases', { mode: ['next'], skew: ['hot:0.5'] }, 'Leave --skew out'],
    ['leases', { mode: ['fast'] }, '--mode takes named'],
    ['leases', { clients: ['0'] }, '--clients takes a whole number from 1 to 10,000; got "0"'],
    ['leases', { duration: ['10 minutes'] }, '--duration takes a duration such as 500ms, 10s or 2m'],
    ['leases', { monitor: ['m1'] }, '--monitor and --owner-token go together'],
    ['fanout', { rate: ['fast'] }, '--rate takes publishes per second'],
    ['fanout', { duration: ['2s'], reconnectStorm: ['5s'] }, '--reconnect-storm takes the time into the run'],
    ['fanout', { streams: ['10'], subscriptions: ['11'] }, '--subscriptions takes a whole number from 1 to 10; got "11"'],
    ['fanout', { size: ['huge'] }, '--size takes a size in bytes'],
    ['publish', { threads: ['0'] }, '--threads takes a whole number from 1 to 64'],
    ['leeses', {}, 'vigil bench takes one of leases, fanout, publish; got "leeses"'],
  ])('%s %j is refused naming the flag', (scenario, flags, message) => {
    expect(() => parseBenchFlags(scenario, { ...base, ...flags })).toThrow(message);
  });

  it('needs --base, and refuses one that is not an http(s) URL', () => {
    expect(() => parseBenchFlags('leases', {})).toThrow('--base is required');
    expect(() => parseBenchFlags('leases', { base: ['ftp://x'] })).toThrow('--base takes http(s) URLs');
  });

  it('refuses a --report it could not write at the end, before the run', ({ onTestFinished }) => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-report-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    expect(reportFile(undefined)).toBeUndefined();
    expect(reportFile([join(dir, 'r.html')])).toBe(join(dir, 'r.html'));
    expect(() => reportFile([''])).toThrow('--report needs a file name, e.g. --report r.html.');
    expect(() => reportFile([join(dir, 'no', 'r.html')])).toThrow(`--report ${join(dir, 'no', 'r.html')}: the folder ${join(dir, 'no')} does not exist`);
    expect(() => reportFile([dir])).toThrow(`--report names a folder, ${dir}; name the file, e.g. --report ${join(dir, 'report.html')}.`);
  });
});
