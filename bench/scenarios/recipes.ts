// Issue 30 point 5: the recipe side at the scale users reach.
// - A parallel recipe 500 wide, each child one step of a custom backend whose
//   agent takes 1 s, run by `vigil sequence` as a user runs it: the runner's
//   peak RSS and the overhead per step, (wall − the agents alone at the same
//   fan-out − the CLI's start) / steps.
// - 10,000 sentinel observations over 1,000 subjects through 3 daemons:
//   reactions per second against the same server's lease-claim rate (16 in
//   flight), and every observation reacted to exactly once.
// --quick: 100 wide and 1,000 observations over 100 subjects (not judged).
import { rmSync } from 'node:fs';
import type { BenchContext } from '../lib/context.ts';
import { agentsAlone, cliStart, recipeProject, runSequence } from '../lib/recipe-run.ts';
import { log } from '../lib/report.ts';
import { claimRate, startFleet, until } from '../lib/sentinel-fleet.ts';
import { round } from '../lib/stats.ts';

const fanout = 64;

export async function wideRecipe(ctx: BenchContext): Promise<void> {
  const children = ctx.quick ? 100 : 500;
  const notJudged = ctx.quick ? '--quick runs 100 wide' : undefined;
  const root = recipeProject(children, fanout, 'sleep 1\necho ok');
  try {
    const start = await cliStart(root);
    const alone = await agentsAlone(root, children, fanout);
    const single = await runSequence(root, 'one');
    const wide = await runSequence(root, 'wide');
    const scenario = '10 recipes';
    ctx.report.add('uws', {
      scenario,
      figure: `parallel ${children} wide (1 s agent, fanout ${fanout}): runner peak RSS`,
      value: wide.peakMb,
      unit: 'MB',
      baseline: { name: 'a one-step recipe, peak RSS', value: single.peakMb, unit: 'MB' },
      ratio: round(wide.peakMb / single.peakMb, 2),
      target: '< 600 MB',
      met: notJudged ?? wide.peakMb < 600,
    });
    const overhead = (wide.ms - alone - start) / children;
    ctx.report.add('uws', {
      scenario,
      figure: `parallel ${children} wide: overhead per step (wall − agents alone − CLI start) / steps`,
      value: overhead,
      unit: 'ms',
      baseline: { name: `the agents alone, ${fanout} at a time, per step`, value: alone / children, unit: 'ms' },
      ratio: round(overhead / (alone / children), 3),
      target: '< 20 ms per step',
      met: notJudged ?? overhead < 20,
    });
    ctx.report.add('uws', {
      scenario,
      figure: `parallel ${children} wide: runner CPU per step`,
      value: (wide.cpu - single.cpu) / children,
      unit: 'ms',
      baseline: { name: 'a one-step recipe, runner CPU', value: single.cpu, unit: 'ms' },
      ratio: round((wide.cpu - single.cpu) / children / single.cpu, 3),
    });
    log(`recipes: ${children} wide in ${round(wide.ms)} ms, agents alone ${round(alone)} ms, CLI start ${round(start)} ms`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function sentinelFleet(ctx: BenchContext): Promise<void> {
  const observations = ctx.quick ? 1000 : 10_000;
  const subjects = ctx.quick ? 100 : 1000;
  const fleet = await startFleet({ instances: 3, concurrency: 8, target: 'echo "$OBSERVATION_SEQ" >> "$OUT/reactions.log"' });
  try {
    await until('the sentinels to subscribe', () => fleet.sentinels.every((s) => s.log().includes('subscribed to')));
    const claims = await claimRate(fleet.server.base, 16, 2000);
    const started = performance.now();
    const seqs = await fleet.publishAll(observations, subjects, 100, 0);
    await until(`${observations} reactions`, () => fleet.reactions().length >= observations, 1_200_000);
    const seconds = (performance.now() - started) / 1000;
    // Late duplicates would land after the count is reached: give them a moment to show.
    await new Promise((r) => setTimeout(r, 2000));
    const seen = fleet.reactions();
    const counts = new Map<number, number>();
    for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
    const missing = seqs.filter((s) => !counts.has(s)).length;
    const twice = [...counts.values()].filter((n) => n > 1).length;
    const scenario = '10 recipes';
    const rate = observations / seconds;
    ctx.report.add('uws', {
      scenario,
      figure: `sentinels: ${observations} observations over ${subjects} subjects, 3 daemons × 8: reactions per second`,
      value: rate,
      unit: 'reactions/s',
      baseline: { name: 'lease claims of distinct subjects, 16 in flight', value: claims, unit: 'claims/s' },
      ratio: round(rate / claims, 3),
    });
    ctx.report.add('uws', {
      scenario,
      figure: 'sentinels: observations not reacted to exactly once (missing + twice)',
      value: missing + twice,
      unit: 'observations',
      target: '0 (each exactly once)',
      met: missing + twice === 0 && seen.length === observations,
      missedPart: `${missing} missing, ${twice} twice, ${seen.length} reactions for ${observations}`,
    });
  } finally {
    await fleet.stop();
  }
}
