// A plan is what every recipe type produces and what the step executor runs:
// steps with their effective dependencies. Recipe types differ only in how
// they plan (see planners.ts), so later types reuse the same executor.
import type { Condition } from '../executor/conditions.ts';
import type { RecipeStep, RecipeType } from '../types.ts';

export interface PlannedStep {
  label: string;
  step: RecipeStep;
  /** Labels that must succeed before this step starts (explicit and implied). */
  needs: string[];
  /**
   * Steps sharing a non-null key that are not concurrencySafe run one at a
   * time (the sequence planner uses the wave number).
   */
  exclusiveGroup: string | null;
  /** The step's `if:`, parsed. */
  condition?: Condition;
}

export interface Plan {
  type: RecipeType;
  /** In a valid execution order (every step after the steps it needs). */
  steps: PlannedStep[];
}

export interface Planner<R> {
  readonly type: RecipeType;
  plan(recipe: R, file: string): Plan;
}

/** Orders steps so each follows its needs; throws with the cycle when there is one. */
export function topologicalOrder(steps: PlannedStep[]): { order: PlannedStep[]; cycle: string[] | null } {
  const byLabel = new Map(steps.map((s) => [s.label, s]));
  const state = new Map<string, 'visiting' | 'done'>();
  const order: PlannedStep[] = [];
  const stack: string[] = [];
  let cycle: string[] | null = null;
  const visit = (label: string): void => {
    if (cycle) return;
    const mark = state.get(label);
    if (mark === 'done') return;
    if (mark === 'visiting') {
      cycle = [...stack.slice(stack.indexOf(label)), label];
      return;
    }
    state.set(label, 'visiting');
    stack.push(label);
    const step = byLabel.get(label);
    for (const need of step?.needs ?? []) visit(need);
    stack.pop();
    state.set(label, 'done');
    if (step && !cycle) order.push(step);
  };
  for (const s of steps) visit(s.label);
  return { order, cycle };
}
