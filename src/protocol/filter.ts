// Filters (§8): keys AND together, values in a list OR together. A filter is
// parsed once into a normalised form; the store turns it into SQL.
import { ProtocolError } from './errors.ts';
import { inVocabulary, type VocabularyName, vocabularies } from './vocabulary.ts';
import { describe, readTimestamp } from './wire-values.ts';

export interface Filter {
  readonly types?: readonly string[];
  readonly subjects?: readonly string[];
  readonly actors?: readonly string[];
  readonly sources?: readonly string[];
  readonly tiers?: readonly string[];
  readonly origins?: readonly string[];
  readonly horizons?: readonly string[];
  readonly since?: string;
  readonly until?: string;
  readonly text?: string;
  /** "#name" keys: tag name → accepted values. */
  readonly tags?: Readonly<Record<string, readonly string[]>>;
}

type ListKey = 'types' | 'subjects' | 'actors' | 'sources' | 'tiers' | 'origins' | 'horizons';
const listKeys: readonly ListKey[] = ['types', 'subjects', 'actors', 'sources', 'tiers', 'origins', 'horizons'];
const vocabularyOf: Partial<Record<ListKey, VocabularyName>> = {
  tiers: 'tier',
  origins: 'origin',
  horizons: 'horizon',
};
export const filterKeys: readonly string[] = [...listKeys, 'since', 'until', 'text', '#<tag>'];

/** Most `#tag` keys one filter may carry: each is an expression SQLite must evaluate per row. */
export const maxTagKeys = 20;

export interface FilterContext {
  /** Types the monitor knows: protocol types, declared types and types it has received. */
  readonly knownTypes: () => readonly string[];
  /** Query strings carry lists as comma-separated text. */
  readonly splitCommas?: boolean;
}

function refuse(message: string, invalid: string[], ctx: FilterContext): ProtocolError {
  return new ProtocolError('INVALID_FILTER', message, {
    invalid,
    known_keys: filterKeys,
    known_types: ctx.knownTypes(),
  });
}

function toList(key: string, value: unknown, ctx: FilterContext): string[] {
  const raw = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of raw) {
    if (typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
    else if (typeof item === 'string' && item.length > 0 && item.length <= 1024) {
      out.push(...(ctx.splitCommas ? item.split(',').filter((s) => s.length > 0) : [item]));
    } else throw refuse(`Filter "${key}" takes a string or a list of strings; got ${describe(item)}.`, [key], ctx);
  }
  if (out.length === 0 || out.length > 100) {
    throw refuse(`Filter "${key}" takes 1 to 100 values; got ${out.length}.`, [key], ctx);
  }
  return out;
}

function typeIsKnown(type: string, known: readonly string[]): boolean {
  if (type.endsWith('*')) return type.length > 1;
  return known.includes(type);
}

export function parseFilter(raw: unknown, ctx: FilterContext): Filter {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw refuse(`A filter is a JSON object; got ${describe(raw)}.`, ['filter'], ctx);
  }
  const entries = Object.entries(raw as Record<string, unknown>);
  const unknownKeys = entries
    .map(([k]) => k)
    .filter((k) => !(listKeys as readonly string[]).includes(k) && !['since', 'until', 'text'].includes(k) && !isTagKey(k));
  if (unknownKeys.length > 0) {
    throw refuse(`Unknown filter key${unknownKeys.length > 1 ? 's' : ''}: ${unknownKeys.join(', ')}. Known keys: ${filterKeys.join(', ')}.`, unknownKeys, ctx);
  }
  const tagKeys = entries.filter(([k]) => isTagKey(k)).map(([k]) => k);
  if (tagKeys.length > maxTagKeys) {
    throw new ProtocolError('INVALID_FILTER', `A filter may name at most ${maxTagKeys} #tag keys; this one names ${tagKeys.length}.`, {
      invalid: tagKeys.slice(maxTagKeys, maxTagKeys + 10),
      limit: maxTagKeys,
      known_keys: filterKeys,
    });
  }
  const filter: Record<string, unknown> = {};
  const tags: Record<string, string[]> = {};
  for (const [key, value] of entries) {
    if (isTagKey(key)) {
      tags[key.slice(1)] = toList(key, value, ctx);
    } else if (key === 'since' || key === 'until') {
      const time = readTimestamp(Array.isArray(value) && value.length === 1 ? value[0] : value);
      if (!time) throw refuse(`Filter "${key}" must be an ISO-8601 timestamp; got ${describe(value)}.`, [key], ctx);
      filter[key] = time;
    } else if (key === 'text') {
      const text = Array.isArray(value) && value.length === 1 ? value[0] : value;
      if (typeof text !== 'string' || text.length === 0 || text.length > 256) {
        throw refuse(`Filter "text" must be a string of 1-256 characters; got ${describe(value)}.`, [key], ctx);
      }
      filter.text = text;
    } else {
      const listKey = key as ListKey;
      const values = toList(key, value, ctx);
      const vocabulary = vocabularyOf[listKey];
      if (vocabulary) {
        const bad = values.filter((v) => !inVocabulary(vocabulary, v));
        if (bad.length > 0) {
          throw refuse(
            `Filter "${key}" has values outside the ${vocabulary} vocabulary: ${bad.join(', ')}. Allowed: ${vocabularies[vocabulary].join(', ')}.`,
            bad.map((b) => `${key}:${b}`),
            ctx,
          );
        }
      }
      if (listKey === 'types') {
        const known = ctx.knownTypes();
        const unknownTypes = values.filter((t) => !typeIsKnown(t, known));
        if (unknownTypes.length > 0) {
          throw refuse(
            `Filter "types" names types this monitor does not know: ${unknownTypes.join(', ')}. A type must be a protocol type, declared by the monitor or already received (or a prefix ending in "*").`,
            unknownTypes.map((t) => `types:${t}`),
            ctx,
          );
        }
      }
      filter[listKey] = [...new Set(values)];
    }
  }
  if (Object.keys(tags).length > 0) filter.tags = tags;
  return filter as Filter;
}

function isTagKey(key: string): boolean {
  return key.startsWith('#') && key.length > 1 && key.length <= 129;
}

function typeCovered(type: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => (a.endsWith('*') ? type.startsWith(a.slice(0, -1)) : a === type));
}

/**
 * An inline pull filter may only narrow the stored one: every value it lists
 * under a key the stored filter also constrains must already be allowed there.
 */
export function assertNarrows(stored: Filter, inline: Filter, ctx: FilterContext): void {
  for (const key of listKeys) {
    const allowed = stored[key];
    const asked = inline[key];
    if (!allowed || !asked) continue;
    const covered = key === 'types' ? (v: string) => typeCovered(v, allowed) : (v: string) => allowed.includes(v);
    const widening = asked.filter((v) => !covered(v));
    if (widening.length > 0) {
      throw refuse(
        `Inline filter "${key}" may only narrow the subscription's filter; ${widening.join(', ')} ${widening.length > 1 ? 'are' : 'is'} outside it (allowed: ${allowed.join(', ')}).`,
        widening.map((v) => `${key}:${v}`),
        ctx,
      );
    }
  }
  for (const [tag, allowed] of Object.entries(stored.tags ?? {})) {
    const asked = inline.tags?.[tag];
    const widening = asked?.filter((v) => !allowed.includes(v)) ?? [];
    if (widening.length > 0) {
      throw refuse(`Inline filter "#${tag}" may only narrow the subscription's filter.`, [`#${tag}`], ctx);
    }
  }
  if (stored.since && inline.since && inline.since < stored.since) {
    throw refuse(`Inline filter "since" may only narrow the subscription's filter (stored since ${stored.since}).`, ['since'], ctx);
  }
  if (stored.until && inline.until && inline.until > stored.until) {
    throw refuse(`Inline filter "until" may only narrow the subscription's filter (stored until ${stored.until}).`, ['until'], ctx);
  }
  const since = inline.since ?? stored.since;
  const until = inline.until ?? stored.until;
  if (since && until && since > until) {
    throw refuse('Inline filter would empty the subscription: "since" is after "until".', ['since', 'until'], ctx);
  }
  if (stored.text && inline.text && !inline.text.toLowerCase().includes(stored.text.toLowerCase())) {
    throw refuse(`Inline filter "text" may only narrow the subscription's filter (it must contain "${stored.text}").`, ['text'], ctx);
  }
}

export function isEmptyFilter(filter: Filter): boolean {
  return Object.keys(filter).length === 0;
}
