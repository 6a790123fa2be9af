// Commands of the recipe runner: `sequence`, `recipe list|types|schema|check`, `runs`,
// `gate`. They parse flags, call src/recipes, and end on an error with its
// message and the exit code of the one table (src/errors/exit-codes.ts: 2 for
// bad input, 1 for a refused or failed run, 130 when cancelled).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CAC } from 'cac';
import { applyBaseFlag, baseHelp } from './base-flag.ts';
import { RecipeInputError } from '../recipes/errors.ts';
import { defineCommand, exitWith, fail } from './command.ts';
import { processAlive } from '../file-lock/process-alive.ts';
import { terminalText } from '../text/terminal.ts';

/** The recipe runner's modules, loaded when a command runs: `vigil --version` and `--help` start without them. */
const runner = async () => {
  const [gate, discovery, describe, root, schema, registry, record, tree, runs, text, progress] = await Promise.all([
    import('../recipes/gates/gate.ts'),
    import('../recipes/loading/discovery.ts'),
    import('../recipes/loading/describe-recipe.ts'),
    import('../workspace/project-root.ts'),
    import('../recipes/loading/recipe-schema.ts'),
    import('../recipes/types/registry.ts'),
    import('../recipes/records/run-record.ts'),
    import('../recipes/records/run-tree.ts'),
    import('../recipes/records/runs-list.ts'),
    import('../recipes/loading/recipe-text.ts'),
    import('../recipes/loop/progress-text.ts'),
  ]);
  return { ...gate, ...discovery, ...describe, ...root, ...schema, ...registry, ...record, ...tree, ...runs, ...text, ...progress };
};

function definedOnly<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: string };
}

function asList(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

function optionalString(value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  // cac turns numeric-looking values into numbers; labels and ids are text.
  if (typeof value === 'number') {
    // …and an empty value into 0: tell `--model ''` apart from `--model 0` by the raw arguments.
    if (givenEmpty(flag)) throw new RecipeInputError(`${flag} needs a value`);
    return String(value);
  }
  if (typeof value !== 'string' || value === '') throw new RecipeInputError(`${flag} needs a value`);
  return value;
}

function givenEmpty(flag: string, argv: readonly string[] = process.argv): boolean {
  return argv.some((arg, i) => arg === `${flag}=` || (arg === flag && argv[i + 1] === ''));
}

/** "Run a recipe of any runnable type: …", the types read from their registry. */
async function sequenceSummary(): Promise<string> {
  const { recipeTypeDefs } = await import('../recipes/types/registry.ts');
  const runnable = recipeTypeDefs().filter((d) => d.planner || d.composite).map((d) => d.type);
  return `Run a recipe of any runnable type: ${runnable.join(', ')}`;
}

export function registerRecipeCommands(cli: CAC): void {
  defineCommand(cli, 'sequence <name>', 'Run a recipe of any runnable type (vigil recipe types lists them)', { summaryForHelp: sequenceSummary })
    .option('--var <NAME=value>', 'Set a variable for prompts and steps (repeatable; overrides recipe env and the environment)')
    .option('--data-var <NAME=value>', "Set a variable that came from outside (a trigger, a webhook, a script): text for prompts and arguments, in the steps' environment only when the recipe declares it (parameters, env), never for names that change how programs start (repeatable)")
    .option('--backend <name>', 'Backend for steps without their own: claude, codex, or a provider from vigil.yml')
    .option('--model <id>', 'Model for every step of the run (and of every child run), replacing the recipe\'s')
    .option('--from <label>', "Resume the recipe's latest run from this step; steps that already succeeded are reused")
    .option('--run <run-id>', 'With --from: resume this run instead of the latest one')
    .option('--resume <run-id>', 'Run the recipe again keeping what succeeded in that run: failed, skipped and unfinished steps (and child runs of a pipeline, compound or parallel recipe) run again; `vigil runs` lists the run ids')
    .option('--merge', 'Parallel, adversarial and convergent runs in a git repository: merge the results (branch vigil/<run>) into the checked-out branch as one merge commit at the end, when the working tree was clean at the start')
    .option('--base <url>', `${baseHelp}: where the run is published when vigil.yml names a server`, { type: [String] })
    .option('--json', 'Print one JSON event per line (every run of the tree) instead of the live view; with --dry-run, the plan as JSON')
    .option('--dry-run', 'Print the plan (waves, steps, backend and model of each, isolation, budgets, child runs) and the preflight verdict; run nothing (exit 0, or 2 when the run would be refused)')
    .example('vigil sequence refactor --var TARGET=src/api --backend claude')
    .example('vigil sequence refactor --dry-run')
    .action(async (name: string, options: Record<string, unknown>) => {
      try {
        applyBaseFlag(options.base);
        if (options.dryRun === true) {
          if (options.from !== undefined || options.run !== undefined || options.resume !== undefined) throw new RecipeInputError('--dry-run plans a whole run; it does not take --from or --run, nor --resume');
          const { sequenceDryRun } = await import('./recipe-check.ts');
          const backend = optionalString(options.backend, '--backend');
          const model = optionalString(options.model, '--model');
          exitWith(sequenceDryRun(name, { vars: asList(options.var), json: options.json === true, ...definedOnly({ backend, model }) }));
        }
        // Loaded on demand: the pool, backends and isolation are only needed to run.
        const [{ runSequence }, { systemVault }, { takeStarterLink }] = await Promise.all([
          import('../recipes/run-sequence.ts'),
          import('../vault/vault-reader.ts'),
          import('../recipes/starter-link.ts'),
        ]);
        // Before anything is started: no step inherits the variable.
        const starter = takeStarterLink(process.env);
        const code = await runSequence(
          {
            name,
            vars: asList(options.var),
            dataVars: asList(options.dataVar),
            cwd: process.cwd(),
            env: process.env,
            vault: systemVault,
            ...(options.merge === true ? { merge: true } : {}),
            ...definedOnly({
              backend: optionalString(options.backend, '--backend'),
              model: optionalString(options.model, '--model'),
              from: optionalString(options.from, '--from'),
              run: optionalString(options.run, '--run'),
              resume: optionalString(options.resume, '--resume'),
            }),
          },
          {
            stdin: process.stdin,
            stdout: process.stdout,
            stderr: process.stderr,
            interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
            json: options.json === true,
            ...(starter ? { starter } : {}),
          },
        );
        exitWith(code);
      } catch (error) {
        fail(error);
      }
    });

  defineCommand(
    cli,
    'recipe <action> [type]',
    'Recipes: "list" shows name, type, description and where each was found; "show <name>" its parameters (description, required, default, choices) and steps or child recipes; "types" lists the recipe types; "schema [type]" prints the path of the JSON Schema (of one type); "check <name>" prints every verdict a run would reach (schema, graph, variables, requires, destructive intents, the recipes it runs included) and runs nothing: exit 0 clean, 2 refused',
  )
    .option('--var <NAME=value>', 'check: set a variable, as for vigil sequence (repeatable)')
    .option('--json', 'check: print the verdicts as JSON')
    .example('vigil recipe list')
    .example('vigil recipe schema parallel')
    .example('vigil recipe show release')
    .example('vigil recipe check release --var TARGET=src/api')
    .action(async (action: string, type: string | undefined, options: Record<string, unknown>) => {
      try {
        if (action === 'check') {
          if (type === undefined) throw new RecipeInputError('recipe check: name the recipe to check (see "vigil recipe list")');
          const { recipeCheck } = await import('./recipe-check.ts');
          exitWith(recipeCheck(type, { vars: asList(options.var), json: options.json === true }));
        }
        const { describeRecipe, discoverRecipes, findProjectRoot, findRecipe, recipeFileBase, recipeSchemaPath, recipeTypeDef, recipeTypeDefs } = await runner();
        const root = findProjectRoot();
        if (action === 'show') {
          if (type === undefined) throw new RecipeInputError('recipe show: name the recipe to show (see "vigil recipe list")');
          return void process.stdout.write(describeRecipe(findRecipe(root, type)));
        }
        if (action === 'schema') {
          if (type === undefined) return void process.stdout.write(`${recipeSchemaPath}\n`);
          const def = recipeTypeDef(type);
          if (!def) throw new RecipeInputError(`recipe schema: unknown type "${type}"; types: ${recipeTypeDefs().map((d) => d.type).join(', ')}`);
          return void process.stdout.write(`${def.schemaFile}\n`);
        }
        if (type !== undefined) throw new RecipeInputError(`recipe ${action}: unexpected argument "${type}"`);
        if (action === 'types') {
          const defs = recipeTypeDefs();
          const width = Math.max(...defs.map((d) => d.type.length));
          for (const d of defs)
            process.stdout.write(`${d.type.padEnd(width)}  ${d.planner || d.composite ? 'runs with "vigil sequence"' : 'not run by "vigil sequence"'}  ${d.summary}\n`);
          return;
        }
        if (action !== 'list') throw new RecipeInputError(`recipe: unknown action "${action}"; actions: list, types, schema, show, check`);
        const { recipes, broken } = discoverRecipes(root);
        if (recipes.length === 0) process.stdout.write(`no recipes in ${join(root, '.vigil', 'recipes')} or ~/.vigil/recipes\n`);
        else {
          const rows = recipes.map((r) => [r.recipe.name, r.recipe.type ?? 'sequence', r.recipe.description ?? '', `${r.scope}: ${r.file}`]);
          const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length), ['NAME', 'TYPE', 'DESCRIPTION'][i]!.length));
          const line = (row: string[]) => row.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c)).join('  ');
          process.stdout.write(`${line(['NAME', 'TYPE', 'DESCRIPTION', 'FOUND IN'])}\n${rows.map(line).join('\n')}\n`);
        }
        // The table stays a table: what is wrong is counted here and said by "vigil recipe check <name>".
        const warned = recipes.filter((r) => (r.recipe.load_warnings?.length ?? 0) > 0);
        if (warned.length > 0)
          process.stderr.write(`${warned.length} with warnings (fields with no equivalent here): ${warned.map((r) => `${r.recipe.name} (${r.recipe.load_warnings!.length})`).join(', ')}; see "vigil recipe check <name>"\n`);
        for (const b of broken)
          {
          // A file that does not parse says where in one line; schema problems are counted.
          const unreadable = b.problems.length === 1 && b.problems[0]!.startsWith(`${b.file}: `) ? b.problems[0]!.slice(b.file.length + 2).split('\n')[0] : null;
          const what = unreadable ?? `${b.problems.length} problem${b.problems.length === 1 ? '' : 's'}`;
          process.stderr.write(`invalid recipe ${b.file}: ${what}; see "vigil recipe check ${recipeFileBase(b.file)}"\n`);
        }
      } catch (error) {
        fail(error);
      }
    });

  defineCommand(cli, 'runs [run-id]', 'List recorded runs, newest first; with a run id, show its steps; "runs prune" removes what finished and interrupted runs left in git')
    .option('--json', 'Print run.json records as JSON')
    .option('--dry-run', 'With prune: say what would be removed, remove nothing')
    .example('vigil runs prune --dry-run')
    .action(async (runId: string | undefined, options: { json?: boolean; dryRun?: boolean }) => {
      try {
        const { findProjectRoot, listRuns, readRunJson, renderRunTree, runsDir, waitingSteps, waitingText } = await runner();
        const root = findProjectRoot();
        if (runId === 'prune') {
          const { pruneProjectRuns } = await import('../recipes/records/prune-runs.ts');
          for (const line of await pruneProjectRuns(root, options.dryRun === true)) process.stdout.write(`${line}\n`);
          return;
        }
        if (options.dryRun) throw new RecipeInputError('runs: --dry-run goes with "vigil runs prune"');
        if (runId) {
          const dir = join(runsDir(root), runId);
          if (!existsSync(join(dir, 'run.json'))) throw new RecipeInputError(`runs: no run "${runId}" in ${runsDir(root)} (see "vigil runs")`);
          const run = readRunJson(dir);
          if (options.json) return void process.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
          process.stdout.write(terminalText(renderRunTree(root, run.id, process.cwd())));
          return;
        }
        // Children of composite runs (they have a role) show under their parent (vigil runs <id>), not in the list.
        const runs = listRuns(root).filter((r) => !r.role);
        if (options.json) return void process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
        if (runs.length === 0) return void process.stdout.write(`no runs recorded in ${runsDir(root)}\n`);
        for (const r of runs) {
          const ok = r.steps.filter((s) => s.status === 'succeeded' || s.status === 'reused').length;
          const kids = r.children ?? [];
          const summary = r.children ? childrenSummary(kids) : `${ok}/${r.steps.length} steps ok`;
          const waiting = r.shownStatus === 'running' ? r.steps.map((s) => waitingText(s)).find(Boolean) : undefined;
          process.stdout.write(`${r.id}  ${r.recipe.padEnd(20)} ${r.shownStatus.padEnd(11)} ${summary}  started ${r.started}${waiting ? `  ${waiting}` : ''}\n`);
          for (const line of waitingSteps(root, r)) process.stdout.write(`    ${line}\n`);
        }
      } catch (error) {
        fail(error);
      }
    });

  defineCommand(cli, 'gate <run-id> <label> <option>', 'Answer the review gate of a paused step from another terminal')
    .example('vigil gate 20261121-201403-ab12 review approve')
    .action(async (runId: string, label: string, option: string) => {
      try {
        const { findProjectRoot, gateAnswerFile, readRunJson, runsDir, writeGateAnswer } = await runner();
        const root = findProjectRoot();
        const dir = join(runsDir(root), runId);
        if (!existsSync(join(dir, 'run.json'))) throw new RecipeInputError(`gate: no run "${runId}" in ${runsDir(root)} (see "vigil runs")`);
        const run = readRunJson(dir);
        const step = run.steps.find((s) => s.label === label);
        if (!step) throw new RecipeInputError(`gate: run ${runId} has no step "${label}"; steps: ${run.steps.map((s) => s.label).join(', ')}`);
        if (step.status !== 'awaiting_gate' || !step.gate)
          throw new RecipeInputError(`gate: step "${label}" of run ${runId} is not waiting at a review gate (it is ${step.status})`);
        if (!processAlive(run.pid))
          throw new RecipeInputError(`gate: run ${runId} is no longer running (its process ${run.pid} is gone); resume it with "vigil sequence ${run.recipe} --from ${label}"`);
        if (!step.gate.options.includes(option))
          throw new RecipeInputError(`gate: "${option}" is not an option of step "${label}"; options: ${step.gate.options.join(', ')}`);
        writeGateAnswer(dir, label, option);
        const file = gateAnswerFile(dir, label);
        for (let i = 0; i < 40 && existsSync(file); i += 1) await new Promise((r) => setTimeout(r, 100));
        if (existsSync(file)) process.stdout.write(`answer "${option}" recorded; run ${runId} will pick it up\n`);
        else process.stdout.write(`step "${label}" of run ${runId}: ${option}\n`);
      } catch (error) {
        fail(error);
      }
    });
}

/**
 * A composite's children in a word: those that ran and how many succeeded, then those that did not
 * run and why in short — "2/2 children ok, 1 skipped: on failure" — so an entry a pipeline skipped by
 * its `on` does not read as a failure.
 */
export function childrenSummary(children: ReadonlyArray<{ status: string; reason?: string }>): string {
  const unrun = children.filter((c) => c.status === 'skipped' || c.status === 'pending' || (c.status === 'cancelled' && c.reason?.startsWith('not started')));
  const ran = children.filter((c) => !unrun.includes(c));
  const parts = [`${ran.filter((c) => c.status === 'succeeded').length}/${ran.length} children ok`];
  const why = (c: { status: string; reason?: string }): string => {
    const reason = c.reason ?? '';
    if (c.status === 'pending') return 'pending';
    const on = /^on: (success|failure|always)/.exec(reason);
    if (on) return `${c.status}: on ${on[1]}`;
    return c.status;
  };
  const counts = new Map<string, number>();
  for (const c of unrun) counts.set(why(c), (counts.get(why(c)) ?? 0) + 1);
  for (const [what, n] of counts) parts.push(`${n} ${what}`);
  return parts.join(', ');
}
