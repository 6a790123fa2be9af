// What the observations table stores of an observation (src/store/observation-text.ts)
// reads back as the served JSON byte for byte, whatever its fields hold; the
// short form is what the server's own and producers' observations get, and
// any body it cannot rebuild exactly is stored whole.
import { describe, expect, it } from 'vitest';
import { type ObservationDraft, observationOf } from '../../src/protocol/observation.ts';
import { serverProvenance } from '../../src/protocol/provenance.ts';
import { servedBody, storedBody } from '../../src/store/observation-text.ts';

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const awkward = ['plain', 'with "quotes" and \\ slashes', ',"data":{"x":1}', ',"~":["a","b"]}', 'ünïcode ✓ \u2028', '{"data":', '\ud800 lone'];

function draftOf(next: () => number): ObservationDraft {
  const pick = <T>(...values: T[]) => values[Math.floor(next() * values.length)]!;
  const provenance = { ...serverProvenance(pick('agent:w1', ...awkward), next() < 0.5), tier: pick<any>('measured', 'unverified'), verification: pick<any>('machine_verified', 'unverified') };
  return {
    type: pick('ai.vigil.monitor.lease', 'test.job', ...awkward),
    subject: pick<string | null>(null, 'job-1', ...awkward),
    time: new Date(1_700_000_000_000 + Math.floor(next() * 1e11)).toISOString(),
    horizon: pick<any>('event', 'state'),
    provenance,
    data: pick<Record<string, unknown>>({ payload: { action: 'claim', fence: 4 } }, { n: 1, text: pick(...awkward), '~': [pick(...awkward)] }, {}),
    tags: pick<Record<string, string>>({}, { team: 'a' }),
  };
}

const columnsOf = (seq: number, d: ObservationDraft) => ({
  seq,
  type: d.type,
  subject: d.subject,
  actor: d.provenance.actor,
  tier: d.provenance.tier,
  origin: d.provenance.origin,
  horizon: d.horizon,
  time: d.time,
});

describe('an observation’s stored body', () => {
  it('reads back as the served JSON, byte for byte, over 5,000 random observations', () => {
    let short = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const next = random(seed);
      const draft = draftOf(next);
      const seq = 1 + Math.floor(next() * 1e12);
      const monitor = next() < 0.5 ? 'work' : 'a-monitor.with_dots';
      const observation = observationOf(monitor, seq, draft);
      const body = JSON.stringify(observation);
      const columns = columnsOf(seq, draft);
      const stored = storedBody(columns, body, observation.source, observation.verified);
      if (stored !== body) short++;
      expect({ seed, served: servedBody(columns, stored) }).toEqual({ seed, served: body });
      // What filters look into is the same in both forms.
      expect(JSON.parse(stored).data).toEqual(JSON.parse(body).data);
    }
    expect(short).toBe(5000);
  });

  it('stores a lease observation in less than two thirds of its served size', () => {
    const draft: ObservationDraft = {
      type: 'ai.vigil.monitor.lease',
      subject: 'job-1234',
      time: '2026-12-06T10:09:54.234Z',
      horizon: 'event',
      provenance: serverProvenance('agent:worker-7', false),
      data: { payload: { action: 'claim', on_behalf_of: null, subject: 'job-1234', holder: 'sub:sub-baf3a701eac8', expires: '2026-12-06T10:10:24.235Z', fence: 4567 } },
      tags: {},
    };
    const observation = observationOf('profile-lease', 4567, draft);
    const body = JSON.stringify(observation);
    const stored = storedBody(columnsOf(4567, draft), body, observation.source, observation.verified);
    expect(stored.length).toBeLessThan((body.length * 2) / 3);
  });

  it('keeps a body whole when its columns do not rebuild it, and reads a whole body as it is', () => {
    const draft = draftOf(random(7));
    const observation = observationOf('work', 9, draft);
    const body = JSON.stringify(observation);
    // Columns that disagree with the body (a different time): the short form would not give it back.
    const columns = { ...columnsOf(9, draft), time: '2000-01-01T00:00:00.000Z' };
    expect(storedBody(columns, body, observation.source, observation.verified)).toBe(body);
    expect(servedBody(columns, body)).toBe(body);
    expect(storedBody(columnsOf(9, draft), '{"other":1}', 'monitor:work', 'unverified')).toBe('{"other":1}');
  });
});
