// The destructive-intent guard over every step of a plan: each prompt (file
// or argument) read for its code and its `run:` lines, a shell step's script
// and each build command read as shell, with the environment the step's
// programs will have. Shared by the run's preflight and `vigil recipe check`.
// Earlier steps' outputs (`${steps.…}`) are not known yet: they read as
// text only known when the step runs, and step-start.ts reads the prompt
// again with them filled in.
import { blankStepRefs } from '../executor/step-refs.ts';
import type { Plan } from '../planning/plan.ts';
import type { RenderedStep } from '../prompts.ts';
import { type DestructiveFinding, scanShell, scanText } from './destructive.ts';

/** What a `${steps.…}` reference reads as before the step starts: output only known when it runs. */
export const UNKNOWN_OUTPUT = '"$(false)"';

export function scanPlanSteps(
  plan: Plan,
  rendered: ReadonlyMap<string, RenderedStep>,
  vars: Record<string, string>,
  file: string,
  envOf: (label: string) => Record<string, string> = (label) => ({ ...vars, ...(rendered.get(label)?.env ?? {}) }),
): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const { step } of plan.steps) {
    const r = rendered.get(step.label);
    const env = envOf(step.label);
    // A step whose prompts could not be rendered (a missing variable, reported apart) still has its build command read.
    if (!r) {
      if (step.build_command) findings.push(...scanShell(step.build_command, `${file}: step "${step.label}".build_command`, env));
      continue;
    }
    findings.push(...scanStepPrompt(step.backend === 'shell' || r.mode === 'shell', r, file, step.label, env));
    // The build command runs in a shell with the step's environment: read it after expanding it.
    if (step.build_command) findings.push(...scanShell(step.build_command, `${file}: step "${step.label}".build_command`, env));
  }
  return findings;
}

/** One step's prompt: a shell step's script as shell; the local agent's prompt as it will read it; other prompts by their code and run: lines. */
export function scanStepPrompt(shell: boolean, r: RenderedStep, file: string, label: string, env: Record<string, string>, promptText = r.promptText): DestructiveFinding[] {
  // A `shell` step's prompt is a script: read all of it as shell, not only its code spans.
  if (shell) return scanShell(blankStepRefs(promptText, UNKNOWN_OUTPUT), `${file}: step "${label}" (shell backend)`, env);
  if (r.agentTemplate !== undefined) return scanText(blankStepRefs(promptText, UNKNOWN_OUTPUT), `${file}: step "${label}" (local agent)`, env);
  return r.args.flatMap((a, i) => scanText(a.prompt ? a.prompt.text : a.value, a.prompt ? `${a.prompt.source} (step "${label}")` : `${file}: step "${label}".args[${i}]`, env));
}
