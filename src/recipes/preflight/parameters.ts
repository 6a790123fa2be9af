// A recipe's declared `parameters`: before the run, each one that no --var,
// environment variable or recipe env sets takes its default; a required one
// still missing is asked for in a terminal, and otherwise every missing one
// is listed together. A value outside `choices` is refused naming them.
import { createInterface } from 'node:readline';
import { RecipeInputError } from '../errors.ts';
import type { RecipeParameter, RunnableRecipe } from '../types.ts';
import { resolveVariables } from '../variables.ts';

export interface Asker {
  /** The answer, or null when the input ended. */
  ask(question: string): Promise<string | null>;
  close(): void;
}

export function terminalAsker(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Asker {
  const rl = createInterface({ input, output, terminal: true });
  // Lines typed ahead of a question are kept for it, not dropped.
  const lines = rl[Symbol.asyncIterator]();
  return {
    ask: async (q) => {
      rl.setPrompt(q);
      rl.prompt();
      const next = await lines.next();
      return next.done ? null : String(next.value);
    },
    close: () => rl.close(),
  };
}

function describe(name: string, p: RecipeParameter): string {
  const parts = [p.description, p.choices ? `one of ${p.choices.map(String).join(', ')}` : undefined].filter(Boolean);
  return `${name}${parts.length > 0 ? ` (${parts.join('; ')})` : ''}`;
}

/** Returns the variables to add at --var priority: defaults and answers. */
export async function resolveParameters(
  recipe: RunnableRecipe,
  file: string,
  processEnv: NodeJS.ProcessEnv,
  cliVars: Record<string, string>,
  makeAsker: (() => Asker) | null,
): Promise<Record<string, string>> {
  const params = Object.entries(recipe.parameters ?? {});
  if (params.length === 0) return {};
  const set = resolveVariables(recipe.env, processEnv, cliVars);
  const added: Record<string, string> = {};
  const missing: Array<[string, RecipeParameter]> = [];
  for (const [name, p] of params) {
    if (set[name] !== undefined) continue;
    if (p.default !== undefined) added[name] = String(p.default);
    else if (p.required) missing.push([name, p]);
  }
  if (missing.length > 0 && makeAsker) {
    const asker = makeAsker();
    try {
      for (const [name, p] of missing) {
        for (;;) {
          const raw = await asker.ask(`${describe(name, p)}: `);
          if (raw === null) throw new RecipeInputError(`${file}: no value for parameter ${name} (the input ended); nothing was started`);
          const answer = raw.trim();
          if (answer === '') continue;
          if (p.choices && !p.choices.map(String).includes(answer)) {
            process.stderr.write(`  ${name} must be one of ${p.choices.map(String).join(', ')}\n`);
            continue;
          }
          added[name] = answer;
          break;
        }
      }
    } finally {
      asker.close();
    }
  } else if (missing.length > 0) {
    throw new RecipeInputError(
      `${file}: recipe "${recipe.name}" needs ${missing.length === 1 ? 'a parameter' : `${missing.length} parameters`} no --var, environment variable or default sets; nothing was started`,
      missing.map(([name, p]) => `--var ${name}=…  ${describe(name, p).slice(name.length).trim()}`.trimEnd()),
    );
  }
  const problems: string[] = [];
  const all = { ...set, ...added };
  for (const [name, p] of params) {
    const value = all[name];
    if (value !== undefined && p.choices && !p.choices.map(String).includes(value))
      problems.push(`parameters.${name}: "${value}" is not allowed; choices: ${p.choices.map(String).join(', ')}`);
  }
  if (problems.length > 0) throw new RecipeInputError(`${file}: recipe "${recipe.name}": parameter values not allowed, nothing was started`, problems);
  return added;
}
