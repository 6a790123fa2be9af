// Prompt files of a step: an argument that names an existing file (relative
// to the recipe's directory, else to the project root, else to the
// workspace) is a prompt file; one that looks like a path but names no file
// is an error (a misspelled prompt file must not become the prompt text).
// Flags and their values (step-args.ts) are never prompt files. Prompts are rendered once, before anything
// runs, so a missing variable stops the run before it starts. A prompt a shell runs (the `shell` backend's
// script) gets variables from outside placed as data; one bound for the local agent is rendered line by
// line (starter/run-lines.ts).
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { FlagDialect } from './backends/agent-flags.ts';
import { RecipeInputError } from './errors.ts';
import { renderAgentPrompt } from './starter/run-lines.ts';
import { type ArgKind, classifyArgs, looksLikePath } from './step-args.ts';
import type { RecipeStep } from './types.ts';
import { substitute, substituteShell } from './variables.ts';

/** How a step's prompt is read: text for an agent, a script for a shell, or lines for the local agent. */
export type PromptMode = 'text' | 'shell' | 'local-agent';

export interface RenderedArg {
  /** The argument as written (variables substituted when it is not a prompt file). */
  value: string;
  /** Set when the argument names a prompt file. */
  prompt?: { source: string; text: string };
  /** A flag, a flag's value, or a word of the prompt. */
  kind: ArgKind;
}

export interface RenderedStep {
  label: string;
  args: RenderedArg[];
  /** The text given to the agent: the prompt files joined, or the plain arguments when there is none. */
  promptText: string;
  env: Record<string, string>;
  /** How the prompt is read (the backend's way). */
  mode?: PromptMode;
  /** For the local agent: the prompt as the recipe wrote it (variables not substituted), rendered again when the step starts. */
  agentTemplate?: string;
}

function existingFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function findPromptFile(arg: string, bases: string[]): string | null {
  if (arg.startsWith('-') || arg.includes('\n')) return null;
  if (isAbsolute(arg)) return existingFile(arg) ? arg : null;
  for (const base of bases) {
    const candidate = resolve(base, arg);
    if (existingFile(candidate)) return candidate;
  }
  return null;
}

export function renderStep(
  step: RecipeStep,
  vars: Record<string, string>,
  ctx: { recipeFile: string; projectRoot: string; workspace: string; dialect?: FlagDialect; mode?: PromptMode; isData?: (name: string) => boolean },
): RenderedStep {
  const bases = [dirname(ctx.recipeFile), ctx.projectRoot, ctx.workspace];
  const problems: string[] = [];
  const isData = ctx.isData ?? (() => false);
  // A shell step's script: a variable from outside is placed as data, never as code.
  const render = (text: string, where: string) => {
    if (ctx.mode !== 'shell') return substitute(text, vars);
    const r = substituteShell(text, vars, isData);
    if (r.error) problems.push(`${where}: ${r.error}`);
    return r;
  };
  const templates: Array<{ text: string; prompt: boolean }> = [];
  const kinds = classifyArgs(step.args, ctx.dialect);
  const args: RenderedArg[] = step.args.map((arg, i) => {
    const kind = kinds[i]!;
    const file = kind === 'word' ? findPromptFile(arg, bases) : null;
    if (file) {
      const template = readFileSync(file, 'utf8');
      templates.push({ text: template, prompt: true });
      const r = render(template, `${file} (step "${step.label}")`);
      for (const name of r.missing)
        problems.push(`${file}: variable $${name} is used in this prompt (step "${step.label}") but set nowhere (recipe env, environment, --var)`);
      return { value: arg, prompt: { source: file, text: r.text }, kind };
    }
    if (kind === 'word' && looksLikePath(arg)) {
      problems.push(
        `${ctx.recipeFile}: steps "${step.label}".args[${i}]: prompt file "${arg}" does not exist (looked in ${[...new Set(bases)].join(', ')})`,
      );
    }
    if (kind === 'word') templates.push({ text: arg, prompt: false });
    const r = render(arg, `${ctx.recipeFile}: steps "${step.label}".args[${i}]`);
    for (const name of r.missing)
      problems.push(`${ctx.recipeFile}: steps "${step.label}".args[${i}]: variable $${name} is set nowhere (recipe env, environment, --var)`);
    return { value: r.text, kind };
  });
  // An inline prompt is a prompt file written in the recipe: the last prompt argument.
  if (step.prompt !== undefined) {
    templates.push({ text: step.prompt, prompt: true });
    const r = render(step.prompt, `${ctx.recipeFile}: steps "${step.label}".prompt`);
    for (const name of r.missing)
      problems.push(`${ctx.recipeFile}: steps "${step.label}".prompt: variable $${name} is set nowhere (recipe env, environment, --var)`);
    args.push({ value: '', prompt: { source: `${ctx.recipeFile}: steps "${step.label}".prompt`, text: r.text }, kind: 'word' });
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(step.env ?? {})) {
    const r = substitute(v, vars);
    for (const name of r.missing)
      problems.push(`${ctx.recipeFile}: steps "${step.label}".env.${k}: variable $${name} is set nowhere (recipe env, environment, --var)`);
    env[k] = r.text;
  }
  if (problems.length > 0) throw new RecipeInputError('missing variables or prompt files, nothing was started', problems);
  const prompts = args.filter((a) => a.prompt).map((a) => a.prompt!.text);
  const promptText = prompts.length > 0 ? prompts.join('\n\n') : args.filter((a) => a.kind === 'word').map((a) => a.value).join(' ');
  if (ctx.mode !== 'local-agent') return { label: step.label, args, promptText, env, ...(ctx.mode ? { mode: ctx.mode } : {}) };
  // The local agent reads the prompt as the agent's stdin shows it: joined as promptText is.
  const anyPrompt = templates.some((t) => t.prompt);
  const agentTemplate = templates.filter((t) => t.prompt === anyPrompt).map((t) => t.text).join(anyPrompt ? '\n\n' : ' ');
  const agent = renderAgentPrompt(agentTemplate, vars, isData);
  if (agent.problems.length > 0) throw new RecipeInputError('variables that cannot go into a run: line, nothing was started', agent.problems.map((p) => `${ctx.recipeFile}: step "${step.label}": ${p}`));
  return { label: step.label, args, promptText: agent.text, env, mode: ctx.mode, agentTemplate };
}
