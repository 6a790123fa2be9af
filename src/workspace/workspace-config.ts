// Reads and validates the workspace file vigil.yml at the project root.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { capProblems } from './concurrency-caps.ts';
import { RecipeInputError } from '../errors/input-error.ts';
import { lazyValidator } from '../json/compile-schema.ts';
import { describeSchemaErrors } from '../json/schema-errors.ts';
import { readBoundedText } from '../text/bounded-file.ts';

export type ProviderType = 'openai' | 'ollama' | 'anthropic' | 'custom';

export interface ProviderConfig {
  type: ProviderType;
  base_url?: string;
  models?: string[];
  api_key?: string;
  command?: string;
  max_tokens?: number;
  /** ollama/openai: model used for CIR embeddings */
  embed_model?: string;
}

export interface AuthProfile {
  api_key?: string;
  env?: Record<string, string>;
}

export interface WorkspaceConfig {
  file: string | null;
  default_backend?: string;
  inactivity_timeout?: number;
  api_key?: string;
  providers: Record<string, ProviderConfig>;
  auth: Record<string, AuthProfile>;
  server?: { base: string; token?: string; monitor?: string };
  /** The cloud API (src/cloud on a vigil serve); clients fall back to server.base. */
  api_url?: string;
  edge_domain?: string;
  /** Backends a recipe names that have none here: name → what to configure (config/recipe-config.ts). */
  unavailable?: Record<string, string>;
  /** model → dollars per million input and output tokens (budgets, when a backend reports no cost). */
  prices?: Record<string, { input_per_mtok: number; output_per_mtok: number; cache_read_per_mtok?: number; cache_write_per_mtok?: number }>;
  /** backend (or `all`) → at most this many agents at once (src/recipes/concurrency). */
  concurrency?: Record<string, number>;
  /** With a server: how long a slot's lease lasts without renewal. */
  concurrency_lease_seconds?: number;
}

const require = createRequire(import.meta.url);
const validator = lazyValidator(require.resolve('./workspace.schema.json'));

/**
 * The project's vigil.yml. VIGIL_BASE, when set, is the server's base URL
 * (`server.base`) for every command and recipe of the process, as `--base`
 * is for one command: the environment wins over the file.
 */
export function loadWorkspaceConfig(projectRoot: string, env: NodeJS.ProcessEnv = process.env): WorkspaceConfig {
  const config = readWorkspaceFile(projectRoot);
  const base = env.VIGIL_BASE?.trim();
  return base ? { ...config, server: { ...config.server, base } } : config;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every command reads vigil.yml: a file far past any settings is refused before it is read. */
const maxWorkspaceFileBytes = 1024 * 1024;

function readWorkspaceFile(projectRoot: string): WorkspaceConfig {
  const file = join(projectRoot, 'vigil.yml');
  if (!existsSync(file)) return { file: null, providers: {}, auth: {} };
  let text: string;
  try {
    text = readBoundedText(file, maxWorkspaceFileBytes, 'vigil.yml is at most 1 MB');
  } catch (error) {
    throw new RecipeInputError(`${file}: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    const { parse } = require('yaml') as typeof import('yaml');
    doc = parse(text) ?? {};
  } catch (error) {
    throw new RecipeInputError(`${file}: not valid YAML: ${(error as Error).message}`);
  }
  // `server: http://…` is what people write first: short for `server: {base: http://…}`.
  if (isRecord(doc) && typeof doc.server === 'string') doc = { ...doc, server: { base: doc.server } };
  const validate = validator();
  if (!validate(doc)) throw new RecipeInputError(`${file}: invalid workspace file`, describeSchemaErrors(validate.errors, doc));
  const config = doc as Omit<WorkspaceConfig, 'file'>;
  const problems: string[] = [];
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    if (p.type === 'custom' && !p.command) problems.push(`providers.${name}: type "custom" needs "command" (path of the agent program)`);
    if (p.type !== 'custom' && !p.base_url && p.type !== 'ollama' && p.type !== 'anthropic' && p.type !== 'openai')
      problems.push(`providers.${name}: needs "base_url"`);
    if (['claude', 'codex'].includes(name)) problems.push(`providers.${name}: "${name}" is a built-in backend name; choose another`);
  }
  problems.push(...capProblems(config.concurrency, config.providers ?? {}));
  if (problems.length > 0) throw new RecipeInputError(`${file}: invalid workspace file`, problems);
  return { file, providers: config.providers ?? {}, auth: config.auth ?? {}, ...stripUndefined(config) };
}

function stripUndefined(config: Omit<WorkspaceConfig, 'file'>): Partial<WorkspaceConfig> {
  const out: Partial<WorkspaceConfig> = {};
  if (config.default_backend !== undefined) out.default_backend = config.default_backend;
  if (config.inactivity_timeout !== undefined) out.inactivity_timeout = config.inactivity_timeout;
  if (config.api_key !== undefined) out.api_key = config.api_key;
  if (config.server !== undefined) out.server = config.server;
  if (config.api_url !== undefined) out.api_url = config.api_url;
  if (config.edge_domain !== undefined) out.edge_domain = config.edge_domain;
  if (config.prices !== undefined) out.prices = config.prices;
  if (config.concurrency !== undefined) out.concurrency = config.concurrency;
  if (config.concurrency_lease_seconds !== undefined) out.concurrency_lease_seconds = config.concurrency_lease_seconds;
  return out;
}
