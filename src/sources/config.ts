// A monitor's `source` (§18), checked field by field: every kind's fields,
// their defaults, and the opt-in rules (enabled kinds, --source-root, the
// shell flag and the admin token, private addresses) for a live source; a
// label (no run field) is only shape-checked. Bad input is a 400 naming the
// field.
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { bareHost, isInwardHost } from '../net/inward-addresses.ts';
import { invalid, ProtocolError } from '../protocol/errors.ts';

export const liveKinds = ['shell', 'http', 'file', 'log', 'ws', 'feed', 'cir', 'formula'] as const;
export type LiveKind = (typeof liveKinds)[number];
export const defaultSourceKinds: readonly LiveKind[] = ['http', 'ws', 'feed', 'cir', 'formula'];

export interface SourcePolicy {
  /** Kinds the server runs (`--sources`). */
  readonly kinds: ReadonlySet<string>;
  /** Where file and log paths must lie (`--source-root`), resolved. */
  readonly root: string;
  /** `--allow-shell-sources`. */
  readonly allowShell: boolean;
  /** http, feed and ws sources may reach loopback, private and link-local addresses (`--allow-private-sources`). */
  readonly allowPrivate: boolean;
}

const networkKinds: ReadonlySet<string> = new Set(['http', 'ws', 'feed']);

/** Ends every refusal of a private address, at create time and when a source connects. */
export const privateSourcesHint = 'start vigil serve with --allow-private-sources to watch such addresses';

export type SourceConfig = { kind: string } & Record<string, unknown>;

type FieldCheck = (value: unknown, field: string) => unknown;

const seconds = (fallback: number, max = 86_400): FieldCheck => (value, field) => {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(`"${field}" takes whole seconds from 1 to ${max}; got ${JSON.stringify(value)}.`, { field });
  }
  return value;
};

const text = (required: boolean, max = 4096): FieldCheck => (value, field) => {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw invalid(`"${field}" ${required ? 'is required and ' : ''}takes a non-empty string of at most ${max} characters.`, { field });
  }
  return value;
};

const url = (schemes: readonly string[]): FieldCheck => (value, field) => {
  const raw = text(true)(value, field) as string;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw invalid(`"${field}" is not a URL: "${raw}".`, { field });
  }
  if (!schemes.includes(parsed.protocol.slice(0, -1))) {
    throw invalid(`"${field}" must be a ${schemes.join(' or ')} URL; got "${raw}".`, { field });
  }
  return parsed.href;
};

const oneOf = (allowed: readonly string[], fallback: string): FieldCheck => (value, field) => {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw invalid(`"${field}" takes one of ${allowed.join(', ')}; got ${JSON.stringify(value)}.`, { field });
  }
  return value;
};

const status: FieldCheck = (value, field) => {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 100 || value > 599) {
    throw invalid(`"${field}" takes an HTTP status from 100 to 599; got ${JSON.stringify(value)}.`, { field });
  }
  return value;
};

// mathjs takes seconds to load: only a formula source pays for it.
const require = createRequire(import.meta.url);
const parseExpression = (raw: string): unknown => (require('mathjs') as typeof import('mathjs')).parse(raw);

const expression: FieldCheck = (value, field) => {
  const raw = text(true, 2000)(value, field) as string;
  try {
    parseExpression(raw);
  } catch (error) {
    throw invalid(`"${field}" is not an expression mathjs can read: ${(error as Error).message}.`, { field });
  }
  return raw;
};

const monitorIds: FieldCheck = (value, field) => {
  if (!Array.isArray(value) || value.length === 0 || value.length > 32 || value.some((v) => typeof v !== 'string' || v.length === 0)) {
    throw invalid(`"${field}" takes a list of 1 to 32 monitor ids.`, { field });
  }
  return value;
};

const cirQuery: FieldCheck = (value, field) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`"${field}" takes an object {type?, domain?, text?, scope?}.`, { field });
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (!['type', 'domain', 'text', 'scope'].includes(key)) {
      throw invalid(`"${field}.${key}" is not a field of a CIR query; it takes type, domain, text and scope.`, { field: `${field}.${key}` });
    }
    out[key] = text(true, 500)(v, `${field}.${key}`) as string;
  }
  return out;
};

const fields: Record<LiveKind, Record<string, FieldCheck>> = {
  shell: {
    command: text(true),
    interval_s: seconds(60),
    timeout_s: seconds(30, 3600),
    emit: oneOf(['lines', 'change', 'exit'], 'change'),
  },
  http: { url: url(['http', 'https']), interval_s: seconds(60), method: oneOf(['GET', 'HEAD', 'POST'], 'GET'), expect_status: status },
  file: { path: text(true), glob: text(false, 500) },
  log: { path: text(false) },
  ws: { url: url(['ws', 'wss']), subprotocol: text(false, 200) },
  feed: { url: url(['http', 'https']), interval_s: seconds(300) },
  cir: { query: cirQuery, db: text(false) },
  formula: { expression, inputs: monitorIds, interval_s: seconds(10) },
};

/** The field whose presence makes a source live (§18); without it the source is a label. */
export const runFields: Readonly<Record<LiveKind, string>> = {
  shell: 'command',
  http: 'url',
  file: 'path',
  log: 'path',
  ws: 'url',
  feed: 'url',
  cir: 'query',
  formula: 'expression',
};

/** True when the server runs this source itself; a source without its kind's run field is a label, as in the base protocol. */
export function isLive(source: SourceConfig): boolean {
  const field = runFields[source.kind as LiveKind];
  return field !== undefined && source[field] !== undefined;
}

const ref = text(false, 256);

/**
 * A label is stored and returned as given and never run, so the opt-in rules
 * do not apply to it; its fields are still those of its kind, each of the
 * right shape, and `ref`.
 */
function checkLabel(source: SourceConfig): SourceConfig {
  const checks = fields[source.kind as LiveKind] ?? {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'kind') continue;
    if (key === 'ref') {
      ref(value, 'source.ref');
      continue;
    }
    const check = checks[key];
    if (!check) {
      throw invalid(`"source.${key}" is not a field of a ${source.kind} source; it takes ${['ref', ...Object.keys(checks)].join(', ')}.`, { field: `source.${key}` });
    }
    check(value, `source.${key}`);
  }
  return source;
}

/** A path under the root (symbolic links resolved as far as they exist), or a 400 naming the field. */
export function confinedPath(root: string, raw: string, field: string): string {
  const wanted = resolve(root, raw);
  let existing = wanted;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = resolve(realpathSync(existing), relative(existing, wanted));
  const rel = relative(realpathSync(root), real);
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw invalid(`"${field}" must lie under the source root ${root} (see vigil serve --source-root); "${raw}" does not.`, { field });
  }
  return real;
}

/** Checks a source against the server's policy; returns it with defaults filled in. */
export function checkSource(source: SourceConfig, policy: SourcePolicy, isAdmin: boolean): SourceConfig {
  const kind = source.kind as LiveKind;
  if (!isLive(source)) return checkLabel(source);
  if (kind === 'shell' && !policy.allowShell) {
    throw invalid('A shell source runs commands on the server: start it with --allow-shell-sources (and create the monitor with the admin token).', {
      field: 'source.kind',
    });
  }
  if (!policy.kinds.has(kind) && !(kind === 'shell' && policy.allowShell)) {
    throw invalid(`This server does not run "${kind}" sources; it runs ${[...policy.kinds].join(', ') || 'none'} (see vigil serve --sources).`, {
      field: 'source.kind',
    });
  }
  if (kind === 'shell' && !isAdmin) {
    throw new ProtocolError('UNAUTHORIZED', 'A shell source can only be created with the admin token (vigil serve --allow-admin).', {
      field: 'source.kind',
    });
  }
  const checks = fields[kind];
  const out: SourceConfig = { kind };
  for (const key of Object.keys(source)) {
    if (key !== 'kind' && key !== 'ref' && !(key in checks)) {
      throw invalid(`"source.${key}" is not a field of a ${kind} source; it takes ${['ref', ...Object.keys(checks)].join(', ')}.`, { field: `source.${key}` });
    }
  }
  if (source.ref !== undefined) out.ref = ref(source.ref, 'source.ref');
  for (const [key, check] of Object.entries(checks)) {
    const value = check(source[key], `source.${key}`);
    if (value !== undefined) out[key] = value;
  }
  if (networkKinds.has(kind) && !policy.allowPrivate) {
    const host = bareHost(new URL(out.url as string));
    if (isInwardHost(host)) {
      throw invalid(`"source.url" points at a private, loopback or link-local address (${host}); this server watches only public addresses (${privateSourcesHint}).`, {
        field: 'source.url',
      });
    }
  }
  if (kind === 'file' || kind === 'log') confinedPath(policy.root, out.path as string, 'source.path');
  if (kind === 'cir' && out.db !== undefined) confinedPath(policy.root, out.db as string, 'source.db');
  return out;
}
