// Plans a `sequence` recipe. Rules (also in docs/recipes.md, "Order"):
// - a step with `wave: N` waits for every step with a lower wave, for every
//   step without a wave written before it, and for its `depends_on`; steps of
//   one wave run concurrently;
// - a step without `wave` but with `depends_on` waits only for those;
// - a step with neither waits for every step listed before it (plain order).
import { isAbsolute, normalize } from 'node:path';
import { RecipeInputError } from '../errors.ts';
import { type Condition, parseCondition } from '../executor/conditions.ts';
import { compileOutputSchema } from '../executor/structured-output.ts';
import { loopProblems } from '../loop/loop-spec.ts';
import type { StepsRecipe } from '../types.ts';
import { type Plan, type PlannedStep, type Planner, topologicalOrder } from './plan.ts';

export const sequencePlanner: Planner<StepsRecipe> = {
  type: 'sequence',
  plan(recipe: StepsRecipe, file: string): Plan {
    const steps = recipe.steps ?? [];
    const problems: string[] = [];
    const seen = new Map<string, number>();
    steps.forEach((s, i) => {
      const first = seen.get(s.label);
      if (first !== undefined) problems.push(`steps[${i}].label: duplicate label "${s.label}" (first used by steps[${first}])`);
      else seen.set(s.label, i);
    });
    const conditions = new Map<string, Condition>();
    steps.forEach((s, i) => {
      if (s.if !== undefined) {
        try {
          const c = parseCondition(s.if);
          for (const ref of c.steps) {
            if (ref === s.label) problems.push(`steps[${i}] ("${s.label}").if: a step cannot read its own steps.${ref}`);
            else if (!seen.has(ref)) problems.push(`steps[${i}] ("${s.label}").if: unknown step "${ref}"; labels in this recipe: ${[...seen.keys()].join(', ')}`);
          }
          conditions.set(s.label, c);
        } catch (error) {
          problems.push(`steps[${i}] ("${s.label}").if: ${(error as Error).message} in ${JSON.stringify(s.if)} (allowed: vars.NAME, steps.<label>.status|output|json.<field>, 'text', numbers, == != < <= > >=, && || !, always() success() failure() contains() startsWith())`);
        }
      }
      problems.push(...loopProblems(s, i, new Set(seen.keys())));
      if (s.output_schema !== undefined) {
        try {
          compileOutputSchema(s.output_schema);
        } catch (error) {
          problems.push(`steps[${i}] ("${s.label}").output_schema: not a valid JSON Schema: ${(error as Error).message}`);
        }
      }
      for (const dep of s.depends_on ?? []) {
        if (dep === s.label) problems.push(`steps[${i}] ("${s.label}").depends_on: a step cannot depend on itself`);
        else if (!seen.has(dep))
          problems.push(
            `steps[${i}] ("${s.label}").depends_on: unknown label "${dep}"; labels in this recipe: ${[...seen.keys()].join(', ')}`,
          );
      }
      if (s.dir !== undefined && (isAbsolute(s.dir) || normalize(s.dir).split(/[\\/]/)[0] === '..'))
        problems.push(`steps[${i}] ("${s.label}").dir: "${s.dir}" must be a relative path inside the workspace`);
      const options = s.gate_options ?? ['approve', 'reject'];
      if (s.gate_action !== undefined && !options.includes(s.gate_action))
        problems.push(`steps[${i}] ("${s.label}").gate_action: "${s.gate_action}" is not one of gate_options: ${options.join(', ')}`);
      if (s.gate_timeout !== undefined && s.gate_action === undefined)
        problems.push(`steps[${i}] ("${s.label}").gate_timeout: needs gate_action, the option it applies when the time is up`);
      if ((s.gate_options || s.gate_action) && s.gate !== 'review')
        problems.push(`steps[${i}] ("${s.label}"): gate_options and gate_action need "gate": "review"`);
    });
    if (problems.length > 0) throw new RecipeInputError(`${file}: invalid recipe "${recipe.name}"`, problems);

    const planned: PlannedStep[] = steps.map((s, i) => {
      const needs = new Set(s.depends_on ?? []);
      if (s.wave !== undefined) {
        for (const other of steps) if (other.wave !== undefined && other.wave < s.wave) needs.add(other.label);
        for (const earlier of steps.slice(0, i)) if (earlier.wave === undefined) needs.add(earlier.label);
      } else if (s.depends_on === undefined) {
        for (const earlier of steps.slice(0, i)) needs.add(earlier.label);
      }
      // A condition reading steps.<label> waits for that step.
      const condition = conditions.get(s.label);
      for (const ref of condition?.steps ?? []) needs.add(ref);
      return { label: s.label, step: s, needs: [...needs], exclusiveGroup: s.wave === undefined ? null : `wave ${s.wave}`, ...(condition ? { condition } : {}) };
    });
    const { order, cycle } = topologicalOrder(planned);
    if (cycle) {
      throw new RecipeInputError(`${file}: invalid recipe "${recipe.name}"`, [
        `steps.depends_on: dependency cycle ${cycle.join(' → ')} (a step with "wave": N also waits for every step of a lower wave and every step without a wave before it; a step without wave or depends_on waits for every step before it)`,
      ]);
    }
    return { type: 'sequence', steps: order };
  },
};
