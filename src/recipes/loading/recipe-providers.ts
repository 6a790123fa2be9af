// A recipe's own `providers`: entries written as in vigil.yml (`type: custom
// | openai | ollama | anthropic`) or as mentu wrote them (`api: cli | openai
// | anthropic | ollama`), turned into vigil.yml's shape. They serve that
// recipe's steps, beside vigil.yml's and before them
// (config/recipe-config.ts). A mentu `api: "cli"` entry for claude or codex
// is the built-in backend; for another agent Vigil has no backend, and a
// step that uses it is refused with what to configure.
import type { ProviderConfig, ProviderType } from '../../workspace/workspace-config.ts';

export interface RecipeProviders {
  providers: Record<string, ProviderConfig>;
  /** Provider name → why there is no backend for it and what to configure. */
  unavailable: Record<string, string>;
  /** Provider name → the built-in backend it names (mentu's `claude: {api: "cli", command: "claude"}` under another name). */
  builtin: Record<string, 'claude' | 'codex'>;
}

const TYPES: ProviderType[] = ['openai', 'ollama', 'anthropic', 'custom'];
const VIGIL_FIELDS = ['type', 'base_url', 'models', 'api_key', 'command', 'max_tokens', 'embed_model'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function mapRecipeProviders(value: unknown): { mapped: RecipeProviders; warnings: string[]; problems: string[] } {
  const mapped: RecipeProviders = { providers: {}, unavailable: {}, builtin: {} };
  const warnings: string[] = [];
  const problems: string[] = [];
  for (const [name, entry] of Object.entries((value ?? {}) as Record<string, unknown>)) {
    const where = `providers.${name}`;
    if (!NAME.test(name)) problems.push(`${where}: a provider name is letters, digits, "_", "." and "-"`);
    else if (!entry || typeof entry !== 'object' || Array.isArray(entry)) problems.push(`${where}: must be an object ({type: custom, command: …} as in vigil.yml, or mentu's {api: …})`);
    else if ('type' in entry) vigilShaped(name, entry as Record<string, unknown>, mapped, problems);
    else mentuShaped(name, entry as Record<string, unknown>, mapped, warnings);
  }
  return { mapped, warnings, problems };
}

function vigilShaped(name: string, entry: Record<string, unknown>, mapped: RecipeProviders, problems: string[]): void {
  const where = `providers.${name}`;
  const type = entry.type as ProviderType;
  if (!TYPES.includes(type)) return void problems.push(`${where}.type: ${JSON.stringify(entry.type)} is not allowed; allowed: ${TYPES.map((t) => `"${t}"`).join(', ')}`);
  for (const field of Object.keys(entry).filter((f) => !VIGIL_FIELDS.includes(f))) problems.push(`${where}: unknown field "${field}"; allowed: ${VIGIL_FIELDS.join(', ')}`);
  if (type === 'custom' && typeof entry.command !== 'string') problems.push(`${where}: type "custom" needs "command" (path of the agent program)`);
  if (name === 'claude' || name === 'codex') problems.push(`${where}: "${name}" is a built-in backend name; choose another`);
  mapped.providers[name] = entry as unknown as ProviderConfig;
}

function mentuShaped(name: string, entry: Record<string, unknown>, mapped: RecipeProviders, warnings: string[]): void {
  const where = `providers.${name}`;
  const api = typeof entry.api === 'string' ? entry.api : ['anthropic', 'openai', 'ollama'].includes(name) ? name : undefined;
  const known = ['api', 'model', 'models', 'base_url', 'max_tokens', 'command', 'agent'];
  for (const field of Object.keys(entry).filter((f) => !known.includes(f))) warnings.push(`${where}.${field}: ignored; no equivalent (api keys come from "api_key" or an "auth" profile in vigil.yml, e.g. vault:<key>)`);
  if (api === undefined) return void warnings.push(`${where}: ignored; it names neither "type" (as in vigil.yml) nor mentu's "api"`);
  const models = typeof entry.model === 'string' ? [entry.model] : Array.isArray(entry.models) ? (entry.models as string[]) : undefined;
  if (api === 'cli') {
    const agent = String(entry.agent ?? entry.command ?? name);
    const program = agent.split('/').pop()!;
    if (program === 'claude' || program === 'codex') {
      if (name !== program) mapped.builtin[name] = program;
      return;
    }
    mapped.unavailable[name] =
      `${where}: api "cli" runs ${agent}, an agent CLI Vigil has no backend for; configure it as a custom provider, in this recipe's "providers" or in vigil.yml: ` +
      `${name}: {type: custom, command: <a program that reads the prompt on stdin and prints the answer>} (docs/recipes.md, Backends), or run the step on claude or codex`;
    return;
  }
  if (api === 'anthropic' || api === 'openai' || api === 'ollama') {
    mapped.providers[name] = {
      type: api,
      ...(typeof entry.base_url === 'string' ? { base_url: entry.base_url } : {}),
      ...(models ? { models } : {}),
      ...(typeof entry.max_tokens === 'number' ? { max_tokens: entry.max_tokens } : {}),
    };
    return;
  }
  mapped.unavailable[name] = `${where}: api ${JSON.stringify(api)} has no backend here; the APIs are "anthropic", "openai" and "ollama" (or "cli" for claude and codex): configure ${name} in vigil.yml's providers (docs/recipes.md, Backends)`;
}
