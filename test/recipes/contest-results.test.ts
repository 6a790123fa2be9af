// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// What a convergent or adversarial run shows at its end: the scoreboard and
// the winner, or the verdicts, on the screen before "run … succeeded"; and a
// scorer that goes on writing after its score line still scores.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseScore } from '../../src/recipes/types/text-results.ts';
import { makeShProject, rootRun, shRecipe } from './composite-helpers.ts';
import { type Project, runVigil } from './helpers.ts';

vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

describe('contest results on the screen', () => {
  it('convergent: the scoreboard and the winner are printed, and a score line followed by more lines counts', async () => {
    project = makeShProject();
    shRecipe(project, 'solve', 'echo $$(( ${STRATEGY} * (4 - ${STRATEGY}) )) > answer.txt');
    // As agents write: the score, then more words after it.
    shRecipe(project, 'score', 'echo "Reviewed the candidate."; echo "**SCORE: $$(cat ${CANDIDATE_DIR}/answer.txt)**"; echo ""; echo "Let me know if you want details."');
    project.recipe({ name: 'race', type: 'convergent', recipe: 'solve', scorer: 'score', strategies: 3 });
    const r = await runVigil(project, ['sequence', 'race', '--merge']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    const lines = r.stdout.split('\n');
    const board = lines.indexOf(`scoreboard of run ${run.id} ("race"):`);
    expect(board).toBeGreaterThanOrEqual(0);
    expect(lines.slice(board + 1, board + 5)).toEqual([
      '  strategy 1  succeeded  score 3',
      '  strategy 2  succeeded  score 4  winner',
      '  strategy 3  succeeded  score 3',
      '  winner: strategy 2 (score 4)',
    ]);
    // The scoreboard comes before the run's last line.
    expect(lines.findIndex((l) => l.startsWith(`run ${run.id} succeeded`))).toBeGreaterThan(board);
    expect(readFileSync(join(project.root, 'answer.txt'), 'utf8')).toBe('4\n');
  });

  it('adversarial: the verdicts and who won are printed', async () => {
    project = makeShProject();
    shRecipe(project, 'builder', 'echo "v${ROUND}" > impl.txt');
    shRecipe(project, 'attacker', 'echo "attack on $$(cat impl.txt)"');
    shRecipe(project, 'judge', 'echo \'{"winner":"blue","reason":"it holds","score":9}\'');
    project.recipe({ name: 'duel', type: 'adversarial', rounds: 2, blue: { recipe: 'builder' }, red: { recipe: 'attacker' }, judge: { recipe: 'judge' } });
    const r = await runVigil(project, ['sequence', 'duel']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(r.stdout).toContain(`verdicts of run ${run.id} ("duel"):\n  round 1: blue (score 9) — it holds\n  round 2: blue (score 9) — it holds\n  blue won; its work is in the run's results\n`);
  });
});

describe('parseScore', () => {
  it.each([
    ['SCORE: 7', 7],
    ['thinking\nSCORE: 7\nmore words after it', 7],
    ['SCORE: 2\nchanged my mind\nSCORE: -3.5\n\nthanks', -3.5],
    ['**SCORE: 8**\n', 8],
    ['no line, but {"score": 6}', 6],
  ])('%j → %d', (text, score) => {
    expect(parseScore(text)).toBe(score);
  });

  it('says what it needs when there is no score', () => {
    expect((parseScore('SCORE: high\nI like it') as Error).message).toContain('a line "SCORE: <number>"');
  });
});
