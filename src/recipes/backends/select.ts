// Chooses and configures the backend of each step, on the main thread and
// before anything runs: the step's `backend`, else --backend, else
// `default_backend` in vigil.yml, else the first of claude, codex on PATH.
import { dirname, isAbsolute, resolve } from 'node:path';
import type { WorkspaceConfig } from '../../workspace/workspace-config.ts';
import { RecipeInputError, RunRefusedError } from '../errors.ts';
import { SHELL_BACKEND } from '../loading/mentu.ts';
import type { BackendSpec } from '../pool/step-task.ts';
import { findOnPath } from '../../paths/which.ts';
import type { ArgKind } from '../step-args.ts';
import { mapStepFlags } from './agent-flags.ts';
import type { PromptMode } from '../prompts.ts';
import { isLocalAgentProgram } from '../starter/run-lines.ts';
import type { RecipeStep } from '../types.ts';
import { resolveSecret, type VaultReader } from '../../vault/vault-reader.ts';

export const BUILTIN_BACKENDS = ['claude', 'codex'] as const;
export { SHELL_BACKEND };

export function chooseBackendName(step: RecipeStep, cliBackend: string | undefined, config: WorkspaceConfig, env: NodeJS.ProcessEnv): string | null {
  if (step.backend) return step.backend;
  if (cliBackend) return cliBackend;
  if (config.default_backend) return config.default_backend;
  for (const name of BUILTIN_BACKENDS) if (findOnPath(name, env.PATH)) return name;
  return null;
}

export interface BackendInput {
  step: RecipeStep;
  name: string;
  /** Step args after rendering, with prompt-file args replaced by the rendered prompt's path. */
  args: string[];
  /** What each of `args` is (read with this backend's flags). */
  kinds: ArgKind[];
  config: WorkspaceConfig;
  vault: VaultReader;
  env: NodeJS.ProcessEnv;
  recipeFile: string;
}

export function authEnv(step: RecipeStep, config: WorkspaceConfig, vault: VaultReader, recipeFile: string): Record<string, string> {
  if (!step.auth) return {};
  const profile = config.auth[step.auth];
  if (!profile)
    throw new RecipeInputError(
      `${recipeFile}: step "${step.label}".auth: no profile "${step.auth}" in ${config.file ?? 'vigil.yml (there is no vigil.yml)'}; known profiles: ${Object.keys(config.auth).join(', ') || 'none'}`,
    );
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(profile.env ?? {})) out[k] = resolveSecret(v, vault, `${config.file}: auth.${step.auth}.env.${k}`)!;
  return out;
}

/** How the backend reads the step's prompt: a shell script (`shell`), the local agent's lines, or text. */
export function promptModeOf(name: string, config: WorkspaceConfig, env: NodeJS.ProcessEnv): PromptMode {
  const provider = config.providers[name];
  if (!provider) return name === SHELL_BACKEND ? 'shell' : 'text';
  if (provider.type !== 'custom' || !provider.command) return 'text';
  const command = findOnPath(customCommandPath(provider.command, config), env.PATH);
  return command && isLocalAgentProgram(command) ? 'local-agent' : 'text';
}

/** A relative path (`.vigil/agents/local-agent.mjs`) is the project's, wherever vigil runs from. */
function customCommandPath(given: string, config: WorkspaceConfig): string {
  return given.includes('/') && !isAbsolute(given) && config.file ? resolve(dirname(config.file), given) : given;
}

export function buildBackendSpec(input: BackendInput): BackendSpec {
  const { step, name, config, vault, env, recipeFile } = input;
  const where = `${recipeFile}: step "${step.label}"`;
  const common = {
    ...(step.model ? { model: step.model } : {}),
    ...(step.effort ? { effort: step.effort } : {}),
    ...(step.permission_mode ? { permissionMode: step.permission_mode } : {}),
  };
  if (name === 'claude' || name === 'codex') {
    const command = findOnPath(name, env.PATH);
    if (!command) throw new RunRefusedError(`${where} uses backend "${name}", but ${name} is not on PATH`);
    // Flags with their values go to the agent's command line, as this backend spells them.
    const flags = input.args.flatMap((value, i) => (input.kinds[i] === 'word' ? [] : [{ value, kind: input.kinds[i] as 'flag' | 'value' }]));
    const { argv, problems } = mapStepFlags(name, flags);
    if (problems.length > 0)
      throw new RecipeInputError(
        `${where}.args: flags ${name} does not take; nothing was started`,
        problems.map((p) => `${where}.args: ${p.flag}: ${p.why}`),
      );
    return { kind: name, command, ...common, extraArgs: argv };
  }
  const provider = config.providers[name];
  // mentu's `shell` backend (unless vigil.yml names a provider "shell"): the prompt is the script, on sh's stdin.
  if (!provider && name === SHELL_BACKEND) return { kind: 'custom', provider: SHELL_BACKEND, command: '/bin/sh', args: ['-s'], shell: true };
  if (!provider && config.unavailable?.[name]) throw new RecipeInputError(`${where}: no backend "${name}": ${config.unavailable[name]}`);
  if (!provider) {
    const known = [...BUILTIN_BACKENDS, SHELL_BACKEND, ...Object.keys(config.providers)];
    throw new RecipeInputError(`${where}: unknown backend "${name}"; known backends: ${known.join(', ')} (providers come from vigil.yml)`);
  }
  if (provider.type === 'custom') {
    const command = findOnPath(customCommandPath(provider.command!, config), env.PATH);
    if (!command) throw new RunRefusedError(`${config.file}: providers.${name}.command: ${provider.command} is not an executable file`);
    return { kind: 'custom', provider: name, command, args: input.args, ...common };
  }
  const model = step.model ?? provider.models?.[0];
  if (!model) throw new RecipeInputError(`${where}: backend "${name}" needs a model: set the step's "model" or providers.${name}.models in vigil.yml`);
  const profileKey = step.auth ? config.auth[step.auth]?.api_key : undefined;
  const apiKey = resolveSecret(profileKey ?? provider.api_key ?? config.api_key, vault, `${config.file}: providers.${name}.api_key`);
  const maxTokens = provider.max_tokens ?? 4096;
  if (provider.type === 'anthropic') {
    const base = (provider.base_url ?? 'https://api.anthropic.com').replace(/\/+$/, '');
    return { kind: 'http', api: 'anthropic', provider: name, url: `${base}/v1/messages`, model, maxTokens, ...(apiKey ? { apiKey } : {}) };
  }
  let base = (provider.base_url ?? (provider.type === 'ollama' ? 'http://127.0.0.1:11434' : 'https://api.openai.com/v1')).replace(/\/+$/, '');
  if (provider.type === 'ollama' && !base.endsWith('/v1')) base += '/v1';
  return { kind: 'http', api: 'openai', provider: name, url: `${base}/chat/completions`, model, maxTokens, ...(apiKey ? { apiKey } : {}) };
}
