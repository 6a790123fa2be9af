// The destructive-intent guard over every step of a plan: each prompt (file
// or argument) read for its code, each build command read as shell, with the
// step's variables. Shared by the run's preflight and `vigil recipe check`.
import type { Plan } from '../planning/plan.ts';
import type { RenderedStep } from '../prompts.ts';
import { type DestructiveFinding, scanShell, scanText } from './destructive.ts';

export function scanPlanSteps(plan: Plan, rendered: ReadonlyMap<string, RenderedStep>, vars: Record<string, string>, file: string): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const { step } of plan.steps) {
    const r = rendered.get(step.label);
    // A step whose prompts could not be rendered (a missing variable, reported apart) still has its build command read.
    if (!r) {
      if (step.build_command) findings.push(...scanShell(step.build_command, `${file}: step "${step.label}".build_command`, vars));
      continue;
    }
    // A `shell` step's prompt is a script: read all of it as shell, not only its code spans.
    if (step.backend === 'shell') findings.push(...scanShell(r.promptText, `${file}: step "${step.label}" (shell backend)`, { ...vars, ...r.env }));
    else
      r.args.forEach((a, i) => {
        const where = a.prompt ? `${a.prompt.source} (step "${step.label}")` : `${file}: step "${step.label}".args[${i}]`;
        findings.push(...scanText(a.prompt ? a.prompt.text : a.value, where, { ...vars, ...r.env }));
      });
    // The build command runs in a shell with the step's variables: read it after expanding them.
    if (step.build_command) findings.push(...scanShell(step.build_command, `${file}: step "${step.label}".build_command`, { ...vars, ...r.env }));
  }
  return findings;
}
