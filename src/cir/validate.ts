// Checks of CIR input: every refusal names the field and what is allowed.
import { invalid } from '../errors/vigil-error.ts';
import { type CaptureInput, type QueryOptions, type RelationKind, relationKinds, type SearchOptions } from './types.ts';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$/;
/** The most characters a signal's body holds. */
export const MAX_BODY = 64 * 1024;
export const MAX_LIMIT = 1000;

function optionalName(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw invalid(field, `must be 1-128 letters, digits or "_.:/-" starting with a letter or digit; got ${JSON.stringify(value)}`);
  }
  return value;
}

function optionalText(field: string, value: unknown, max: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw invalid(field, `must be a non-empty string of at most ${max} characters`);
  return value;
}

export function checkScope(value: unknown, fallback: string): string {
  return optionalName('scope', value) ?? fallback;
}

export function checkLimit(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LIMIT) {
    throw invalid('limit', `must be a whole number from 1 to ${MAX_LIMIT}; got ${JSON.stringify(value)}`);
  }
  return value;
}

export function checkCapture(input: CaptureInput): Required<Pick<CaptureInput, 'body' | 'type'>> & CaptureInput {
  if (typeof input !== 'object' || input === null) throw invalid('signal', 'must be an object with at least a body');
  if (typeof input.body !== 'string' || input.body.trim().length === 0) throw invalid('body', 'must be a non-empty string');
  if (input.body.length > MAX_BODY) throw invalid('body', `must be at most ${MAX_BODY} characters; got ${input.body.length}`);
  const c = input.confidence;
  if (c !== undefined && c !== null && (typeof c !== 'number' || !Number.isFinite(c) || c < 0 || c > 1)) {
    throw invalid('confidence', `must be a number from 0.0 to 1.0; got ${JSON.stringify(c)}`);
  }
  if (input.tags !== undefined && input.tags !== null) {
    if (!Array.isArray(input.tags) || input.tags.length > 32 || input.tags.some((t) => typeof t !== 'string' || t.length === 0 || t.length > 64)) {
      throw invalid('tags', 'must be a list of at most 32 non-empty strings of at most 64 characters');
    }
  }
  if (input.embed !== undefined && typeof input.embed !== 'boolean') throw invalid('embed', 'must be true or false');
  return {
    ...input,
    type: optionalName('type', input.type) ?? 'note',
    domain: optionalName('domain', input.domain),
    source: optionalText('source', input.source, 512),
  };
}

export function checkQuery(options: QueryOptions): QueryOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  optionalName('type', options.type);
  optionalName('domain', options.domain);
  optionalText('source', options.source, 512);
  return options;
}

export function checkSearch(text: unknown, options: SearchOptions): string {
  if (typeof text !== 'string' || text.trim().length === 0) throw invalid('text', 'must be a non-empty string');
  if (text.length > 4096) throw invalid('text', 'must be at most 4096 characters');
  checkQuery(options);
  return text;
}

export function checkRelationKind(kind: unknown): RelationKind {
  if (typeof kind !== 'string' || !(relationKinds as readonly string[]).includes(kind)) {
    throw invalid('kind', `must be one of ${relationKinds.join(', ')}; got ${JSON.stringify(kind)}`);
  }
  return kind as RelationKind;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30m`, `24h`, `7d`, `2w`, `45s`, or an ISO 8601 time → the ISO time it stands for. */
export function parseSince(value: unknown, now: number = Date.now()): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = String(value).trim();
  const rel = /^(\d{1,9})\s*([smhdw])$/.exec(text);
  if (rel) return new Date(now - Number(rel[1]) * UNITS[rel[2]!]!).toISOString();
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(Date.parse(text))) return new Date(Date.parse(text)).toISOString();
  throw invalid('since', `takes a duration such as 30m, 24h, 7d, 2w or an ISO 8601 time; got ${JSON.stringify(value)}`);
}
