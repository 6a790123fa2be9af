// `formula`: evaluates a mathjs expression over the states of its input
// monitors every interval and writes when the value changes. The expression
// runs in a restricted mathjs instance: no import, no parsing or evaluating
// other text, no unit creation and no functions that allocate large
// matrices, so an expression can neither reach outside nor exhaust memory.
import { all, create, type EvalFunction } from 'mathjs';
import type { SourceRun } from '../run.ts';

const math = create(all!);
const compile = math.compile;
const refused = (name: string) => () => {
  throw new Error(`${name} is not available in a formula source`);
};
math.import(
  Object.fromEntries(
    [
      'import', 'createUnit', 'evaluate', 'parse', 'compile', 'simplify', 'derivative', 'resolve', 'reviver',
      'zeros', 'ones', 'identity', 'range', 'matrix', 'sparse', 'resize', 'concat', 'kron', 'diag', 'reshape',
    ].map((name) => [name, refused(name)]),
  ),
  { override: true },
);

/** A variable name for a monitor id: letters, digits and underscores. */
export const variableOf = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_').replace(/^(\d)/, '_$1');

/** Compiles an expression with the restricted instance (throws on syntax errors). */
export function compileFormula(expression: string): EvalFunction {
  return compile(expression);
}

function jsonValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'boolean' || typeof value === 'string' || value === null) return value;
  return math.format(value as never, { precision: 14 });
}

export function runFormula(run: SourceRun): void {
  const { expression, inputs, interval_s: interval } = run.settings<{ expression: string; inputs: string[]; interval_s: number }>();
  const compiled = compileFormula(expression);
  run.every(interval * 1000, () => {
    const values = inputs.map((id) => {
      const state = run.stateOf(id);
      if (!state) throw new Error(`input monitor "${id}" does not exist`);
      const last = run.lastDataOf(id);
      return {
        id,
        head: state.head,
        observations: state.counters.observations,
        rejected: state.counters.rejected,
        delivered: state.counters.delivered,
        acted: state.counters.acted,
        live: state.live.value,
        age_s: state.ages.since_last_observation_s ?? -1,
        value: typeof last?.value === 'number' || typeof last?.value === 'boolean' ? last.value : null,
      };
    });
    const scope = new Map<string, unknown>([['inputs', values]]);
    for (const value of values) scope.set(variableOf(value.id), value);
    let result: unknown;
    try {
      result = jsonValue(compiled.evaluate(scope));
    } catch (error) {
      throw new Error(`the expression failed: ${(error as Error).message}`);
    }
    const previous = run.cursor<{ value: unknown }>();
    if (previous !== undefined && JSON.stringify(previous.value) === JSON.stringify(result)) {
      run.contact();
      return;
    }
    run.emit({ data: { expression, value: result, previous: previous?.value ?? null, inputs: values.map((v) => v.id) }, cursor: { value: result } });
  });
}
