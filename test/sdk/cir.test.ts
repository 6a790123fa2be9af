import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CirStore } from '../../src/cir/store.ts';
import { onEvent, type VigilEvent } from '../../src/events/channel.ts';
import { makeSdkProject, type SdkProject, vigil } from './helpers.ts';

// Each test runs the real CLI several times; on a loaded machine one start takes seconds.
vi.setConfig({ testTimeout: 300_000 });

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

const json = async (args: string[], env?: Record<string, string>) => {
  const r = await vigil(project, [...args, '--json'], env ? { env } : {});
  if (r.code !== 0) throw new Error(`vigil ${args.join(' ')} → ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};

describe('vigil cir', () => {
  it('captures, queries newest first with filters and since, searches by bm25, keeps scopes apart', async () => {
    const a = await json(['cir', 'capture', 'tests pass on main', '--type', 'test.result', '--confidence', '0.9', '--source', 'run:1', '--tag', 'ci']);
    const b = await json(['cir', 'capture', 'deploy to staging finished', '--type', 'deploy', '--domain', 'infra']);
    await json(['cir', 'capture', 'secret scope note', '--scope', 'other']);
    const all = await json(['cir', 'query']);
    expect(all.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
    expect(all[1]).toMatchObject({ type: 'test.result', body: 'tests pass on main', confidence: 0.9, source: 'run:1', tags: ['ci'], scope: 'default' });
    expect(await json(['cir', 'query', '--type', 'deploy'])).toHaveLength(1);
    expect(await json(['cir', 'query', '--since', '1h'])).toHaveLength(2);
    expect(await json(['cir', 'query', '--since', '2099-01-01T00:00:00Z'])).toHaveLength(0);
    const hits = await json(['cir', 'search', 'staging deploy']);
    expect(hits[0].id).toBe(b.id);
    expect(await json(['cir', 'query', '--scope', 'other'])).toHaveLength(1);
    expect(await json(['cir', 'query'], { VIGIL_CIR_SCOPE: 'other' })).toHaveLength(1);
  });

  it('finds patterns across runs and contradictions by negation or relation; stats count them with the real file size', async () => {
    await json(['cir', 'capture', 'Build failed: 3 errors in api', '--type', 'build', '--source', 'run:1']);
    await json(['cir', 'capture', 'build failed: 7 errors in api', '--type', 'build', '--source', 'run:2']);
    const pos = await json(['cir', 'capture', 'tests pass', '--type', 'test']);
    const neg = await json(['cir', 'capture', 'tests do not pass', '--type', 'test']);
    const x = await json(['cir', 'capture', 'the cache is warm', '--type', 'cache', '--embed']);
    const y = await json(['cir', 'capture', 'latency is high', '--type', 'perf']);
    await json(['cir', 'relate', x.id, y.id, 'contradicts']);
    const patterns = await json(['cir', 'patterns', '--min-strength', '0.5']);
    expect(patterns).toHaveLength(1);
    expect(patterns[0]).toMatchObject({ type: 'build', recurrence_count: 2, strength: 0.5 });
    const contradictions = await json(['cir', 'contradictions']);
    const byId = Object.fromEntries(contradictions.map((c: { id: string; contradicts: string[] }) => [c.id, c.contradicts]));
    expect(byId[pos.id]).toEqual([neg.id]);
    expect(byId[x.id]).toEqual([y.id]);
    const stats = await json(['cir', 'stats']);
    expect(stats).toMatchObject({ signals: 6, relations: 1, embeddings: 1, patterns: 1, contradictions: 4 });
    expect(stats.database_size_bytes).toBeGreaterThan(4096);
  });

  it('refuses bad input naming the field (exit 2)', async () => {
    const cases: Array<[string[], string]> = [
      [['cir', 'capture', 'x', '--confidence', '1.5'], 'confidence:'],
      [['cir', 'capture', ''], 'body:'],
      [['cir', 'relate', 'a', 'b', 'friends'], 'kind:'],
      [['cir', 'query', '--since', 'yesterday'], 'since:'],
      [['cir', 'query', '--limit', '0'], 'limit:'],
      [['cir', 'frob'], 'unknown action'],
    ];
    for (const [args, field] of cases) {
      const r = await vigil(project, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(field);
    }
    const unknown = await vigil(project, ['cir', 'relate', 'sig_a', 'sig_b', 'supports']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('from: no signal "sig_a"');
  });

  it('ingests JSONL all or nothing, naming the bad line', async () => {
    const file = join(project.root, 'signals.jsonl');
    writeFileSync(file, '{"body":"one","type":"t"}\n\n{"body":"two","confidence":0.3}\n');
    expect(await json(['cir', 'ingest', file])).toMatchObject({ ingested: 2 });
    const bad = await vigil(project, ['cir', 'ingest'], { stdin: '{"body":"three"}\n{"body":"four","confidence":2}\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('line 2: confidence');
    expect(await json(['cir', 'query'])).toHaveLength(2);
    rmSync(file);
  });

  it('captures the text of standard input given "-", as documented, or no text at all', async () => {
    const dash = await vigil(project, ['cir', 'capture', '-', '--type', 'note.piped', '--json'], { stdin: 'from a pipe\n' });
    expect(dash.code, dash.stderr).toBe(0);
    const bare = await vigil(project, ['cir', 'capture', '--type', 'note.piped', '--json'], { stdin: 'also piped\n' });
    expect(bare.code, bare.stderr).toBe(0);
    expect((await json(['cir', 'query', '--type', 'note.piped'])).map((s: { body: string }) => s.body).sort()).toEqual(['also piped', 'from a pipe']);
  });
});

describe('CIR events', () => {
  const dir = makeSdkProject();
  afterAll(() => dir.cleanup());
  it('a capture emits cir.capture on the product-event channel', () => {
    const seen: VigilEvent[] = [];
    const off = onEvent('cir.capture', (e) => {
      seen.push(e);
    });
    const store = new CirStore(join(dir.root, '.vigil', 'cir.db'), {});
    const { id } = store.capture({ body: 'hello', type: 'greeting' });
    off();
    store.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.data).toMatchObject({ id, body: 'hello', type: 'greeting', scope: 'default' });
  });
});
