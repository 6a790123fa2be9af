// sdk.sequence: run a recipe and record its output in CIR.
// cd examples && vigil script run scripts/sequence-run.ts --var RECIPE=build
const recipe = sdk.vars.RECIPE ?? 'build';
const known = sdk.sequence.list().map((r) => r.name);
if (!known.includes(recipe)) throw new Error(`no recipe "${recipe}"; recipes: ${known.join(', ')}`);
try {
  const output = sdk.sequence.run(recipe, { vars: { TARGET: sdk.workspace.path } });
  const { id } = sdk.cir.capture(output.slice(0, 4000) || '(no output)', { type: 'recipe.output', source: `recipe:${recipe}` });
  return { recipe, signal: id, chars: output.length };
} catch (e) {
  // e.code is SEQUENCE_FAILED (details.run_id names the run) or TIMEOUT after 600000 ms.
  return { recipe, failed: e.code, message: e.message };
}
