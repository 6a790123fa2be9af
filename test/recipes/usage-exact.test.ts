// Usage totals are exact: a local OpenAI-compatible server (a real HTTP
// server in this test) answers each call with known usage, and over several
// runs every step records exactly what it was told and every run the sum, in
// tokens and in dollars priced from vigil.yml. A model without a price makes
// usd unknown: warned at start, recorded as such, and a usd budget over it is
// refused before anything runs.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeShProject, rootRun, shRecipe } from './composite-helpers.ts';
import { makeProject, type Project, runsOf, runVigil, stepOf } from './helpers.ts';

vi.setConfig({ testTimeout: 240_000 });

interface Sent {
  prompt: string;
  prompt_tokens: number;
  completion_tokens: number;
}

async function startUsageServer(): Promise<{ url: string; sent: Sent[]; close(): Promise<void> }> {
  const sent: Sent[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string }> };
      const prompt = body.messages[0]!.content;
      const call = body.messages.filter((m) => m.role === 'assistant').length + 1;
      const doneAt = Number(/DONE_AT=(\d+)/.exec(prompt)?.[1] ?? '1');
      // Usage differs by call and by conversation length, so a lost or doubled report shows.
      const usage = { prompt_tokens: 1000 + 37 * body.messages.length + (sent.length % 7), completion_tokens: 200 + 11 * call };
      sent.push({ prompt, ...usage });
      const content = call >= doneAt ? `call ${call}: DONE` : `call ${call}: working`;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: `c${sent.length}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content } }], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let project: Project;
let server: Awaited<ReturnType<typeof startUsageServer>> | undefined;
afterEach(async () => {
  project?.cleanup();
  await server?.close();
  server = undefined;
});

const PRICE = { input_per_mtok: 3, output_per_mtok: 15 };

describe('usage over an OpenAI-compatible server', () => {
  it('records exactly the usage the server returned, for every step of every run, and the sums', async () => {
    server = await startUsageServer();
    project = makeProject();
    project.yml(`providers:\n  local:\n    type: openai\n    base_url: ${server.url}/v1\n    models: [m-priced]\nprices:\n  m-priced: { input_per_mtok: ${PRICE.input_per_mtok}, output_per_mtok: ${PRICE.output_per_mtok} }\n`);
    project.recipe({
      name: 'counted',
      canary: false,
      budget: { usd: 100, tokens: 10_000_000 },
      steps: [
        { label: 'one', backend: 'local', args: ['step one'], depends_on: [] },
        { label: 'three', backend: 'local', args: ['step three DONE_AT=3'], completion_keyword: 'DONE', max_phases: 5, depends_on: [] },
      ],
    });
    const runs = 5;
    const screens: string[] = [];
    for (let i = 0; i < runs; i += 1) {
      const r = await runVigil(project, ['sequence', 'counted']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain('usd is unknown');
      screens.push(r.stdout);
    }
    expect(server.sent).toHaveLength(runs * 4);
    const recorded = runsOf(project);
    expect(recorded).toHaveLength(runs);
    // Each run's calls are the server's records in order: a run's 4 calls come before the next run's.
    for (const [i, run] of recorded.entries()) {
      const calls = server.sent.slice(i * 4, i * 4 + 4);
      const of = (text: string) => calls.filter((c) => c.prompt.startsWith(text));
      const sum = (cs: Sent[]) => {
        const input = cs.reduce((n, c) => n + c.prompt_tokens, 0);
        const output = cs.reduce((n, c) => n + c.completion_tokens, 0);
        return { input_tokens: input, output_tokens: output, usd: Math.round(((input * PRICE.input_per_mtok + output * PRICE.output_per_mtok) / 1e6) * 1e6) / 1e6 };
      };
      expect(of('step one')).toHaveLength(1);
      expect(of('step three')).toHaveLength(3);
      expect(stepOf(run, 'one').usage).toEqual(sum(of('step one')));
      expect(stepOf(run, 'three').usage).toEqual(sum(of('step three')));
      expect(run.usage).toMatchObject(sum(calls));
      expect(run.usage!.by_step).toEqual({ one: sum(of('step one')), three: sum(of('step three')) });
      const total = sum(calls);
      expect(screens[i]).toContain(`usage: ${total.input_tokens} input + ${total.output_tokens} output tokens, $${total.usd.toFixed(4)}\n`);
    }
  });

  it('a model without a price: usd is unknown (warned at start, recorded), and a usd budget over it is refused', async () => {
    server = await startUsageServer();
    project = makeProject();
    project.yml(`providers:\n  local:\n    type: openai\n    base_url: ${server.url}/v1\n    models: [m-free]\n`);
    project.recipe({ name: 'unpriced', canary: false, steps: [{ label: 'a', backend: 'local', args: ['hello'] }] });
    let r = await runVigil(project, ['sequence', 'unpriced']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: step "a": usd is unknown: the backend reports no cost and vigil.yml has no prices entry for model "m-free"');
    expect(r.stdout).toMatch(/usage: \d+ input \+ \d+ output tokens, usd unknown\n/);
    const run = runsOf(project)[0]!;
    expect(run.usage).toMatchObject({ input_tokens: server.sent[0]!.prompt_tokens, output_tokens: server.sent[0]!.completion_tokens, usd: 0, usd_unknown: true });
    expect(stepOf(run, 'a').usage).toMatchObject({ usd_unknown: true });

    const file = project.recipe({ name: 'capped', canary: false, steps: [{ label: 'a', backend: 'local', args: ['hello'], budget: { usd: 1 } }] });
    r = await runVigil(project, ['sequence', 'capped']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('a usd budget cannot be counted, nothing was started');
    expect(r.stderr).toContain(`${file}: step "a".budget.usd: the backend reports no cost and vigil.yml has no prices entry for model "m-free"`);
    expect(server.sent).toHaveLength(1);
  });

  it('a custom agent that reports tokens without dollars under a usd budget is stopped: the budget cannot be kept', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'uncounted', 'echo \'USAGE {"input_tokens":300,"output_tokens":200}\'; sleep 30', { budget: { usd: 5 } }, { model: 'tiny-free' });
    const r = await runVigil(project, ['sequence', 'uncounted']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.status).toBe('over_budget');
    expect(run.steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
    expect(run.steps[0]!.reason).toContain('budget cannot be kept');
    expect(run.steps[0]!.reason).toContain('has a usd limit of $5, but the backend reports no cost and vigil.yml has no prices entry for model "tiny-free"');
    expect(run.usage).toMatchObject({ input_tokens: 300, output_tokens: 200, usd_unknown: true });
  });
});
