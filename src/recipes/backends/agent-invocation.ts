// The command line an agent step starts, for `vigil sequence --dry-run`: the
// program, its arguments and the environment the backend adds, made by the
// same functions the backends call when they start it (claudeArgs,
// codexArgs; a custom program gets the step's args). test/recipes/
// plan-agrees.test.ts holds it to what a stand-in agent is started with. An
// HTTP provider starts no program: its URL.
import type { BackendSpec } from '../pool/step-task.ts';
import { claudeArgs, claudeHasEffortFlag, EFFORT_THINKING_TOKENS } from './claude.ts';
import { codexArgs } from './codex.ts';

export type AgentInvocation = { command: string; args: string[]; env: Record<string, string> } | { url: string };

export function agentInvocation(spec: BackendSpec, options: { outputSchema?: { text: string; file: string }; vm?: boolean } = {}): AgentInvocation {
  const schema = options.outputSchema;
  if (spec.kind === 'claude') {
    const effortFlag = spec.effort !== undefined && claudeHasEffortFlag(spec.command);
    const env: Record<string, string> = {};
    if (spec.effort && !effortFlag) env.MAX_THINKING_TOKENS = EFFORT_THINKING_TOKENS[spec.effort] ?? '10000';
    if (options.vm) env.IS_SANDBOX = '1';
    return { command: spec.command, args: [...claudeArgs(spec, effortFlag), ...(schema ? ['--json-schema', schema.text] : [])], env };
  }
  if (spec.kind === 'codex') {
    const args = codexArgs(spec);
    // Before the final `-` (the prompt on stdin).
    if (schema) args.splice(args.length - 1, 0, '--output-schema', schema.file);
    return { command: spec.command, args, env: {} };
  }
  if (spec.kind === 'custom') return { command: spec.command, args: spec.args, env: {} };
  return { url: spec.url };
}
