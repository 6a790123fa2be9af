// The request validators the build writes as code (dist/protocol/schemas/requests.validate.cjs), which
// a built server loads instead of compiling, judge and normalise every body as the validators ajv
// compiles from the schemas do: the same verdict, the same errors (what the protocol's error names) and
// the same values coerced in place (digit strings to numbers, timestamps to UTC).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { protocolAjv } from '../../src/protocol/validate.ts';

const written = join(import.meta.dirname, '../../dist/protocol/schemas/requests.validate.cjs');
const sub = 'sub-0123456789ab';

const cases: Array<[id: string, body: Record<string, unknown>]> = [
  ['monitor-create', { id: 'builds', capabilities: ['observe', 'act'] }],
  ['monitor-create', { id: 'b', capabilities: ['fly'] }],
  ['observation', { type: 'ci.build.failed', subject: 'job-1', time: '2026-12-07 10:00:00+01:00', tier: 'shared', origin: 'agent' }],
  ['observation', { type: 'ci.build.failed', time: 'yesterday', tier: 'secret', origin: 'robot' }],
  ['observation', { type: 'ci.build.failed', time: 20261207 }],
  ['publish-batch', { observations: [{ type: 'a.b', time: '2026-12-07T10:00:00Z' }, { type: 'a.b', time: '2026-12-07' }] }],
  ['publish-batch', { observations: [{ type: 'a.b', time: '2026-13-45' }] }],
  ['lease-claim', { subscription: sub, next: true, count: '7', wait: '0', lease_duration_seconds: 60 }],
  ['lease-claim', { subscription: sub, next: true, count: 0, wait: 51, lease_duration_seconds: '86401' }],
  ['lease-claim', { subscription: sub, subject: 'j', count: 1.5, wait: -1, lease_duration_seconds: '1e3' }],
  ['lease-claim', { subscription: sub, subject: 'j', count: '0000000000000001', lease_duration_seconds: '9999999999999999' }],
  ['lease-complete', { subscription: sub, items: [{ subject: 'a', fence: '12' }, { subject: 'b', fence: 3 }], next: { count: '2' } }],
  ['lease-complete', { subscription: sub, subject: 'a', fence: 9007199254740992 }],
  ['pull', { subscription: sub, wait: '50', limit: '1000', cursor: '0' }],
  ['pull', { subscription: sub, limit: '1001', cursor: -3 }],
  ['ack', { subscription: sub, cursor: '42' }],
  ['subscribe', { monitor: 'builds', subscriber: 'me', capabilities: ['observe'], from: '12' }],
  ['subscribe', { monitor: 'builds', subscriber: 'me', from: 'tomorrow' }],
];

const comparable = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => ({ keyword: e.keyword, instancePath: e.instancePath, params: e.params, message: e.message })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('the validators the build writes as code', () => {
  it('are written by the build', () => {
    expect(existsSync(written), `${written} is missing: run npm run build`).toBe(true);
  });

  const fromBuild = existsSync(written) ? (createRequire(import.meta.url)(written) as Record<string, ValidateFunction>) : {};
  const compiled = protocolAjv({ validateSchemas: false });
  for (const [i, [id, body]] of cases.entries()) {
    it(`judge and normalise as the compiled ones: ${id} #${i}`, () => {
      const compiledCheck = compiled.getSchema(id)!;
      const writtenCheck = fromBuild[id]!;
      expect(writtenCheck, `no validator for ${id}`).toBeTypeOf('function');
      const a = structuredClone(body);
      const b = structuredClone(body);
      const verdict = compiledCheck(a);
      expect(writtenCheck(b)).toBe(verdict);
      expect(comparable(writtenCheck.errors)).toEqual(comparable(compiledCheck.errors));
      expect(b).toEqual(a);
    });
  }

  it('coerce and normalise in place, and refuse out of range (a check that the cases above test something)', () => {
    const claim = { subscription: sub, next: true, count: '7', lease_duration_seconds: '60' };
    expect(fromBuild['lease-claim']!(claim)).toBe(true);
    expect(claim).toEqual({ subscription: sub, next: true, count: 7, lease_duration_seconds: 60 });
    const observation = { type: 'ci.build.failed', time: '2026-12-07 10:00:00+01:00' };
    expect(fromBuild.observation!(observation)).toBe(true);
    expect(observation.time).toBe('2026-12-07T09:00:00.000Z');
    expect(fromBuild['lease-claim']!({ subscription: sub, next: true, count: 101 })).toBe(false);
    expect(fromBuild['lease-claim']!.errors![0]).toMatchObject({ keyword: 'wholeNumber', instancePath: '/count', params: { min: 1, max: 100 } });
    expect(fromBuild['monitor-create']!({ id: 'builds', capabilities: ['fly'] })).toBe(false);
    expect(fromBuild['monitor-create']!.errors![0]).toMatchObject({ keyword: 'vocabulary', params: { vocabulary: 'capabilities' } });
  });
});
