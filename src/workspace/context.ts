// What every SDK call knows about where it runs: the workspace, the project
// root found from it (where .vigil/ lives), the environment, and the
// script's variables. The CLI builds one from the current directory; a
// script run builds one from --workspace and --var.
import { resolve } from 'node:path';
import { findProjectRoot } from './project-root.ts';

export interface SdkContext {
  workspace: string;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  vars: Readonly<Record<string, string>>;
  /** Who calls: a person at the CLI, or a script (which never sees the cloud's and the edge's credentials). */
  caller: 'cli' | 'script';
}

export function sdkContext(input: { workspace: string; env?: NodeJS.ProcessEnv; vars?: Record<string, string>; caller?: SdkContext['caller'] }): SdkContext {
  const workspace = resolve(input.workspace);
  return {
    workspace,
    projectRoot: findProjectRoot(workspace),
    env: input.env ?? process.env,
    vars: Object.freeze({ ...(input.vars ?? {}) }),
    caller: input.caller ?? 'cli',
  };
}
