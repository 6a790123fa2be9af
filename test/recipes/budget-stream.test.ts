// Budgets that stop an agent within one message (issue 44.1 and 44.2), with a
// stand-in Claude Code that prints what claude 2.1 prints in stream-json and
// logs every start, message and exit with times. The invariants are read
// from that log, never from Vigil's own records: the overshoot of a budget is
// at most the message that crossed it (parallel children: the message each
// running agent was on), and a resumed run never spends more than its cap in
// total plus that overshoot. Stand-ins that the budget must stop take turns at
// a model's pace: the kill follows a crossing message by the reader's reaction,
// and a program printing faster than that can print more before it dies.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it, type OnTestFinishedHandler, vi } from 'vitest';
import { startFakeModelServer } from '../fakes/fake-openai-server.ts';
import { childRuns, rootRun } from './composite-helpers.ts';
import { makeProject, type Project, runVigil } from './helpers.ts';

vi.setConfig({ testTimeout: 180_000 });

/** A project of its own for the test, removed with its message log when the test ends (the tests run at once). */
function ownProject(onTestFinished: (fn: OnTestFinishedHandler) => void, options?: Parameters<typeof makeProject>[0]): Project {
  const project = makeProject(options);
  onTestFinished(() => {
    rmSync(msgLogOf(project), { force: true });
    rmSync(`${project.root}.fail`, { force: true });
    project.cleanup();
  });
  return project;
}

const msgLogOf = (p: Project): string => `${p.root}.messages.jsonl`;

interface MsgEntry {
  event: 'start' | 'message' | 'exit';
  pid: number;
  step: string | null;
  canary: boolean;
  tokens?: number;
  time: number;
}

function messages(p: Project): MsgEntry[] {
  const file = msgLogOf(p);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MsgEntry)
    .filter((e) => e.event === 'message');
}

const tokensIn = (entries: MsgEntry[]): number => entries.reduce((n, e) => n + (e.tokens ?? 0), 0);

/** All the tokens printed, the agent whose message took the total to `cap`, and how many each agent printed after it (in the log's order). */
function pastCap(entries: MsgEntry[], cap: number): { total: number; crosser: number | null; after: Map<number, number> } {
  let total = 0;
  let crosser: number | null = null;
  const after = new Map<number, number>();
  for (const e of entries) {
    if (total >= cap) after.set(e.pid, (after.get(e.pid) ?? 0) + 1);
    total += e.tokens ?? 0;
    if (crosser === null && total >= cap) crosser = e.pid;
  }
  return { total, crosser, after };
}

// 100 input, 100 output and 900 cache-read tokens: 1,100 tokens a message, as claude 2.1 reports a turn.
const PER_MESSAGE = 1100;
// Twenty turns of about 800 ms each: a model's turn takes seconds, the stand-in's a moment.
const TWENTY_TURNS = 'TURNS=20 SLEEP_MS=16000';

function env(p: Project, extra: Record<string, string> = {}): Record<string, string> {
  return { FAKE_MSG_LOG: msgLogOf(p), FAKE_MSG_TOKENS: '100,100,0,900', ...extra };
}

// Most of each test is the stand-ins' turns at a model's pace (800 ms each, four to eleven of them): the tests wait
// at once, each in a project of its own, the two longest first.
describe.concurrent('budgets', () => {
  describe('a budget is run-wide and survives --resume', () => {
    it('the resumed run spends only what is left; with nothing left, --resume exits 2 saying what was spent and the cap', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      const failFile = `${project.root}.fail`;
      project.recipe({
        name: 'two',
        budget: { tokens: 8000 },
        steps: [
          { label: 'a', args: ['TURNS=3'], backend: 'claude' },
          { label: 'b', args: [TWENTY_TURNS], backend: 'claude', depends_on: ['a'] },
        ],
      });
      const e = env(project, { FAKE_FAIL_FILE: failFile, FAKE_FAIL_STEP: 'b' });
      // The first run: the canary, a's three messages, then b fails after its first (5,500 of 8,000 tokens).
      writeFileSync(failFile, '');
      const first = await runVigil(project, ['sequence', 'two'], e);
      expect(first.code).toBe(1);
      const firstRun = rootRun(project);
      expect(firstRun.steps.map((s) => s.status)).toEqual(['succeeded', 'failed']);
      // The canary's usage is recorded in the run and counted in its budget.
      expect(firstRun.usage!.by_step.canary).toMatchObject({ input_tokens: 1000, output_tokens: 100 });
      const spentBefore = tokensIn(messages(project));
      expect(spentBefore).toBe(5 * PER_MESSAGE);

      rmSync(failFile);
      const second = await runVigil(project, ['sequence', 'two', '--resume', firstRun.id], e);
      expect(second.code).toBe(1);
      const secondRun = rootRun(project);
      expect(secondRun.status).toBe('over_budget');
      expect(secondRun.usage!.carried).toMatchObject({ run: firstRun.id, input_tokens: 5000, output_tokens: 500 });
      // In total, over both runs, at most the one message that crossed the cap.
      expect(tokensIn(messages(project))).toBeGreaterThanOrEqual(8000);
      expect(tokensIn(messages(project)) - PER_MESSAGE).toBeLessThan(8000);

      const third = await runVigil(project, ['sequence', 'two', '--resume', secondRun.id], e);
      expect(third.code).toBe(2);
      expect(third.stderr).toMatch(new RegExp(`--resume ${secondRun.id}: nothing is left of the budget: run ${secondRun.id} of "two" spent \\d+ tokens of its 8000 tokens`));
      expect(rootRun(project).id).toBe(secondRun.id);
    });

    it('a parallel run resumed carries what all its children spent: the cap holds over both runs', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      const failFile = `${project.root}.fail`;
      // Turns at a model's pace (800 ms): a stand-in printing its turns a moment apart can print another before
      // any reader kills it on a loaded machine (once seen: 9,900 tokens), which no runner can prevent.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: vigil's own variable, rendered by the runner
      project.recipe({ name: 'one', steps: [{ label: 'work', args: ['TURNS=3 SLEEP_MS=2400 ${WHICH}'], backend: 'claude' }] });
      project.recipe({ name: 'pair', type: 'parallel', recipe: 'one', transfer_mode: 'none', budget: { tokens: 8000 }, vars: [{ WHICH: 'fine' }, { WHICH: 'FAIL_IF_FILE' }] });
      const e = env(project, { FAKE_FAIL_FILE: failFile, FAKE_FAIL_STEP: 'prompt' });
      writeFileSync(failFile, '');
      const first = await runVigil(project, ['sequence', 'pair'], e);
      expect(first.code).toBe(1);
      const firstRun = rootRun(project);
      expect(tokensIn(messages(project))).toBe(firstRun.usage!.input_tokens + firstRun.usage!.output_tokens);
      rmSync(failFile);
      const second = await runVigil(project, ['sequence', 'pair', '--resume', firstRun.id], e);
      expect(second.code).toBe(1);
      const secondRun = rootRun(project);
      expect(secondRun.id).not.toBe(firstRun.id);
      expect(secondRun.status).toBe('over_budget');
      // Over both runs: the cap was reached; the agent whose message crossed it printed nothing more, and any other
      // agent then running at most the message it was on (one child is resumed; both, had the first run cancelled one).
      const { total, crosser, after } = pastCap(messages(project), 8000);
      expect(total).toBeGreaterThanOrEqual(8000);
      expect(after.get(crosser!) ?? 0).toBe(0);
      for (const [pid, n] of after) expect(n, `agent ${pid} printed ${n} messages past the cap`).toBeLessThanOrEqual(1);
      const third = await runVigil(project, ['sequence', 'pair', '--resume', secondRun.id], e);
      expect(third.code).toBe(2);
      expect(third.stderr).toContain('nothing is left of the budget');
    });
  });

  describe('a budget stops claude within one message', () => {
    it('a tokens budget: the stand-in printed at most the message that crossed 5,000 tokens; the step is killed_by budget', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      project.recipe({ name: 'long', canary: false, budget: { tokens: 5000 }, steps: [{ label: 'work', args: [TWENTY_TURNS], backend: 'claude' }] });
      const r = await runVigil(project, ['sequence', 'long'], env(project));
      expect(r.code).toBe(1);
      const printed = messages(project);
      // 5 messages reach 5,500 ≥ 5,000: a sixth is past the one that crossed.
      expect(tokensIn(printed)).toBeGreaterThanOrEqual(5000);
      expect(tokensIn(printed) - PER_MESSAGE).toBeLessThan(5000);
      const run = rootRun(project);
      expect(run.status).toBe('over_budget');
      expect(run.steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
      expect(run.steps[0]!.reason).toMatch(/budget reached: run \S+ \("long"\) used 5500 tokens of 5000 tokens \(tokens\)/);
      expect(r.stdout).toMatch(/run \S+ over_budget \(budget reached: run \S+ \("long"\) used 5500 tokens of 5000 tokens \(tokens\)\)/);
      expect(run.usage).toMatchObject({ input_tokens: 5000, output_tokens: 500 });
    });

    it('a usd budget priced from vigil.yml while claude has not reported its cost: at most the crossing message', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      // $1,000 a million tokens: a message of 1,100 tokens costs $1.10.
      project.yml('prices:\n  claude-test-1: { input_per_mtok: 1000, output_per_mtok: 1000 }\n');
      project.recipe({ name: 'dear', canary: false, budget: { usd: 5 }, steps: [{ label: 'work', args: [TWENTY_TURNS], backend: 'claude', model: 'claude-test-1' }] });
      const r = await runVigil(project, ['sequence', 'dear'], env(project));
      expect(r.code).toBe(1);
      const printed = messages(project);
      const usd = (n: number): number => (n * 1000) / 1_000_000;
      expect(usd(tokensIn(printed))).toBeGreaterThanOrEqual(5);
      expect(usd(tokensIn(printed) - PER_MESSAGE)).toBeLessThan(5);
      const run = rootRun(project);
      expect(run.steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
      expect(run.steps[0]!.reason).toContain('(usd)');
    });

    it('codex: a tokens budget stops it within one turn (its turn.completed is the grain)', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished, { claude: false, codex: true });
      project.recipe({ name: 'cx', canary: false, budget: { tokens: 5000 }, steps: [{ label: 'work', args: ['ROUNDS=20 SLEEP_MS=16000'], backend: 'codex', max_phases: 50 }] });
      const r = await runVigil(project, ['sequence', 'cx'], { FAKE_MSG_LOG: msgLogOf(project), FAKE_TURN_TOKENS: '1000,800,100' });
      expect(r.code).toBe(1);
      const printed = messages(project);
      expect(tokensIn(printed)).toBeGreaterThanOrEqual(5000);
      expect(tokensIn(printed) - PER_MESSAGE).toBeLessThan(5000);
      expect(rootRun(project).steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
    });

    it("codex exec's one turn crossing the budget at its turn.completed has finished: the step stands, not killed", async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished, { claude: false, codex: true });
      project.recipe({
        name: 'cx1',
        canary: false,
        budget: { tokens: 500 },
        steps: [
          { label: 'a', args: ['TURNS=3'], backend: 'codex' },
          { label: 'b', args: ['TURNS=3'], backend: 'codex', depends_on: ['a'] },
        ],
      });
      const r = await runVigil(project, ['sequence', 'cx1'], { FAKE_MSG_LOG: msgLogOf(project), FAKE_TURN_TOKENS: '1000,800,100' });
      expect(r.code).toBe(1);
      const run = rootRun(project);
      expect(run.steps.find((s) => s.label === 'a')).toMatchObject({ status: 'succeeded' });
      expect(run.steps.find((s) => s.label === 'b')!.status).toBe('cancelled');
      expect(run.status).toBe('over_budget');
    });

    it("a step's own budget crossed as its agent finished: the step stands, its dependent runs, and the run ends over_budget naming the step's budget", async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished, { claude: false, codex: true });
      project.recipe({
        name: 'cx-step',
        canary: false,
        steps: [
          { label: 'a', args: ['TURNS=3'], backend: 'codex', budget: { tokens: 500 } },
          { label: 'b', args: ['TURNS=1'], backend: 'codex', depends_on: ['a'] },
        ],
      });
      const r = await runVigil(project, ['sequence', 'cx-step'], { FAKE_MSG_LOG: msgLogOf(project), FAKE_TURN_TOKENS: '1000,800,100' });
      expect(r.code).toBe(1);
      const run = rootRun(project);
      const a = run.steps.find((s) => s.label === 'a')!;
      expect(a).toMatchObject({ status: 'succeeded' });
      expect(a.killed_by).toBeUndefined();
      expect(a.budget_reached).toMatch(/^budget reached: step "a" of run \S+ used \d+ tokens of 500 tokens/);
      expect(run.steps.find((s) => s.label === 'b')!.status).toBe('succeeded');
      expect(run.status).toBe('over_budget');
      expect(run.reason).toBe(a.budget_reached);
    });

    it('an HTTP provider: a tokens budget stops the phase loop at the response that crossed it', async ({ onTestFinished }) => {
      const server = await startFakeModelServer();
      try {
        const project = ownProject(onTestFinished);
        project.yml(`providers:\n  local:\n    type: openai\n    base_url: ${server.url}/v1\n    models: [fake-7b]\n`);
        project.recipe({
          name: 'chatty',
          canary: false,
          budget: { tokens: 5000 },
          steps: [{ label: 'ask', backend: 'local', args: ['Go on. USAGE=1000,100'], completion_keyword: 'NEVER', max_phases: 20 }],
        });
        const r = await runVigil(project, ['sequence', 'chatty']);
        expect(r.code).toBe(1);
        // The server's own count: five responses reach 5,500 tokens; no sixth call was made.
        expect(server.requests).toHaveLength(5);
        expect(rootRun(project).steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
      } finally {
        await server.close();
      }
    });

    it('cache reads priced apart (cache_read_per_mtok): the usd budget holds to what the messages really cost', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      // A message: 100 fresh input and 100 output tokens at $1,000 a million, 900 cache-read ones at $100: $0.29.
      project.yml('prices:\n  claude-test-1: { input_per_mtok: 1000, output_per_mtok: 1000, cache_read_per_mtok: 100 }\n');
      project.recipe({ name: 'cached', canary: false, budget: { usd: 1 }, steps: [{ label: 'work', args: [TWENTY_TURNS], backend: 'claude', model: 'claude-test-1' }] });
      const r = await runVigil(project, ['sequence', 'cached'], env(project));
      expect(r.code).toBe(1);
      const n = messages(project).length;
      // Four messages reach $1.16: no fewer (a cache read priced as fresh input would stop it at the first), no more.
      expect(n).toBe(4);
      expect(rootRun(project).usage).toMatchObject({ usd: 1.16 });
    });

    it('parallel children share one budget: together they stop within one message each of crossing it', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: [TWENTY_TURNS], backend: 'claude' }] });
      project.recipe({ name: 'wide', type: 'parallel', recipe: 'one', transfer_mode: 'none', budget: { tokens: 5000 }, vars: [{ A: '1' }, { A: '2' }] });
      const r = await runVigil(project, ['sequence', 'wide'], env(project));
      expect(r.code).toBe(1);
      const printed = messages(project);
      // Each agent alive when the budget was crossed may have printed the message it was on.
      expect(tokensIn(printed) - 2 * PER_MESSAGE).toBeLessThan(5000);
      // Together they spent up to the cap (the second may start late on a loaded machine, so who spent what varies).
      expect(tokensIn(printed)).toBeGreaterThanOrEqual(5000);
      const run = rootRun(project);
      expect(run.status).toBe('over_budget');
      expect(run.reason).toMatch(/budget reached: run \S+ \("wide"\) used \d+ tokens of 5000 tokens/);
      for (const child of childRuns(project, run)) expect(child.status).toBe('over_budget');
      // Both were stopped before claude reported its cost, for the same reason: it is said once, not once a child.
      expect(`${r.stdout}${r.stderr}`.match(/usd is unknown/g), r.stdout + r.stderr).toHaveLength(1);
    });

    it("a step still waiting for a concurrency slot when the run's budget is reached never started: cancelled, saying why", async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      project.yml('concurrency:\n  claude: 1\n');
      project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: [TWENTY_TURNS], backend: 'claude' }] });
      project.recipe({ name: 'pair', type: 'parallel', recipe: 'one', transfer_mode: 'none', budget: { tokens: 3000 }, vars: [{ A: '1' }, { A: '2' }] });
      const r = await runVigil(project, ['sequence', 'pair'], env(project));
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const steps = childRuns(project, rootRun(project)).map((c) => c.steps[0]!);
      // One agent ran until the budget stopped it; the other step waited for the one slot all along.
      expect(steps.map((s) => s.status).sort()).toEqual(['cancelled', 'killed']);
      const waited = steps.find((s) => s.status === 'cancelled')!;
      expect(waited.reason).toMatch(/^not started: budget reached: run \S+ \("pair"\) used \d+ tokens of 3000 tokens/);
      expect(waited.killed_by).toBeUndefined();
      // It no longer says it waits (it once kept "waiting for a claude slot" in its record).
      expect(waited.slot_wait ?? null).toBeNull();
      // The live view says it waited, then that it was cancelled, never that it got its slot.
      expect(r.stdout).toMatch(/work: waiting for a claude slot: 1 of 1 held by run/);
      expect(r.stdout).not.toMatch(/got its slot/);
      // From the stand-ins' own log: only one agent ever started.
      expect(new Set(messages(project).map((e) => e.pid)).size).toBe(1);
    });

    it("a child whose agent finished on the turn that crossed the run's budget ends over_budget naming the budget, not 'cancelled by a signal'", async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished, { claude: false, codex: true });
      project.yml('concurrency:\n  codex: 1\n');
      // codex exec's one turn reports its usage as it ends: crossing the budget there, it has finished and stands.
      project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: ['TURNS=3'], backend: 'codex' }] });
      project.recipe({ name: 'pair', type: 'parallel', recipe: 'one', transfer_mode: 'none', budget: { tokens: 500 }, vars: [{ A: '1' }, { A: '2' }] });
      const r = await runVigil(project, ['sequence', 'pair'], { FAKE_MSG_LOG: msgLogOf(project), FAKE_TURN_TOKENS: '1000,800,100' });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const children = childRuns(project, rootRun(project));
      const ran = children.find((c) => c.steps[0]!.status === 'succeeded');
      expect(ran, r.stdout).toBeDefined();
      expect(ran).toMatchObject({ status: 'over_budget', reason: expect.stringMatching(/^budget reached: run \S+ \("pair"\) used \d+ tokens of 500 tokens/) });
      expect(r.stdout).not.toMatch(/cancelled by a signal/);
    });

    it('a step whose result tips the budget has finished: it stands (not killed), the run stops after it', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      // No prices: claude's messages count $0 until its result reports what the run cost ($0.30 each).
      project.recipe({
        name: 'tip',
        canary: false,
        budget: { usd: 0.25 },
        env: { FAKE_COST: '0.3' },
        steps: [
          { label: 'a', args: ['TURNS=3'], backend: 'claude' },
          { label: 'b', args: ['TURNS=3'], backend: 'claude', depends_on: ['a'] },
        ],
      });
      const r = await runVigil(project, ['sequence', 'tip'], env(project));
      expect(r.code).toBe(1);
      const run = rootRun(project);
      const a = run.steps.find((s) => s.label === 'a')!;
      expect(a.status).toBe('succeeded');
      expect(a.killed_by).toBeUndefined();
      expect(run.steps.find((s) => s.label === 'b')!.status).toBe('cancelled');
      expect(run.status).toBe('over_budget');
      expect(run.usage!.usd).toBe(0.3);
      expect(r.stdout).not.toMatch(/killed phase/);
      expect(r.stdout).toMatch(/over_budget \(budget reached: run \S+ \("tip"\) used \$0\.3 of \$0\.25 \(usd\)\)/);
      expect(messages(project).filter((m) => m.step === 'b')).toEqual([]);
    });

    it('the last step tipping the budget: its result stands, and the run still ends over_budget (exit 1), not succeeded', async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      project.recipe({ name: 'tip-last', canary: false, budget: { usd: 0.25 }, env: { FAKE_COST: '0.3' }, steps: [{ label: 'a', args: ['TURNS=3'], backend: 'claude' }] });
      const r = await runVigil(project, ['sequence', 'tip-last'], env(project));
      expect(r.code).toBe(1);
      const run = rootRun(project);
      expect(run.steps[0]).toMatchObject({ status: 'succeeded' });
      expect(run.steps[0]!.killed_by).toBeUndefined();
      expect(run.status).toBe('over_budget');
      expect(run.usage!.usd).toBe(0.3);
      expect(r.stdout).toMatch(/over_budget \(budget reached: run \S+ \("tip-last"\) used \$0\.3 of \$0\.25 \(usd\)\)/);
    });
  });

  describe('the limit that stopped a step, by name', () => {
    it("claude's own turn limit (error_max_turns) is named as such, not as vigil's max_phases; vigil's is killed_by max_phases", async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      project.recipe({
        name: 'turns',
        canary: false,
        steps: [
          // The stand-in stops itself after 10 turns, as claude does at a turn limit of its own.
          { label: 'own', args: ['TURNS=12'], backend: 'claude', max_phases: 20, depends_on: [] },
          { label: 'ours', args: ['TURNS=5'], backend: 'claude', max_phases: 2, depends_on: [] },
        ],
      });
      const r = await runVigil(project, ['sequence', 'turns'], env(project));
      expect(r.code).toBe(1);
      const run = rootRun(project);
      const own = run.steps.find((s) => s.label === 'own')!;
      expect(own).toMatchObject({ status: 'failed', killed_by: 'error_max_turns' });
      expect(own.reason).toContain('claude stopped itself at its own turn limit after 10 turns');
      expect(run.steps.find((s) => s.label === 'ours')).toMatchObject({ status: 'killed', killed_by: 'max_phases', reason: 'max_phases (2) reached before the agent finished' });
    });

    it("claude's result reconciles the dollars priced from vigil.yml with its own total_cost_usd", async ({ onTestFinished }) => {
      const project = ownProject(onTestFinished);
      project.yml('prices:\n  claude-test-1: { input_per_mtok: 1000, output_per_mtok: 1000 }\n');
      project.recipe({ name: 'exact', canary: false, env: { FAKE_COST: '0.0123' }, steps: [{ label: 'a', args: ['TURNS=3'], backend: 'claude', model: 'claude-test-1' }] });
      const r = await runVigil(project, ['sequence', 'exact'], env(project));
      expect(r.code, r.stderr).toBe(0);
      // Priced from vigil.yml the three messages came to $3.30; claude said $0.0123, and claude's figure stands.
      expect(rootRun(project).usage).toMatchObject({ input_tokens: 3000, output_tokens: 300, usd: 0.0123 });
      expect(rootRun(project).usage!.usd_unknown).toBeUndefined();
    });
  });
});
