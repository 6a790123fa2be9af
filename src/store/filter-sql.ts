// A parsed filter (§8) as a WHERE clause on the observations table.
import { type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { Filter } from '../protocol/filter.ts';
import type { Database } from './tables.ts';

type Eb = ExpressionBuilder<Database, 'observations'>;

const columnOf = {
  subjects: 'subject',
  actors: 'actor',
  sources: 'source_ref',
  tiers: 'tier',
  origins: 'origin',
  horizons: 'horizon',
} as const;

function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filterConditions(eb: Eb, filter: Filter): Expression<SqlBool>[] {
  const conditions: Expression<SqlBool>[] = [];
  if (filter.types) {
    const exact = filter.types.filter((t) => !t.endsWith('*'));
    const prefixes = filter.types.filter((t) => t.endsWith('*')).map((t) => t.slice(0, -1));
    const alternatives: Expression<SqlBool>[] = [];
    if (exact.length > 0) alternatives.push(eb('type', 'in', exact));
    for (const prefix of prefixes) alternatives.push(sql<SqlBool>`type like ${likePrefix(prefix)} escape '\\'`);
    conditions.push(eb.or(alternatives));
  }
  for (const [key, column] of Object.entries(columnOf) as [keyof typeof columnOf, (typeof columnOf)[keyof typeof columnOf]][]) {
    const values = filter[key];
    if (values) conditions.push(eb(column, 'in', [...values]));
  }
  if (filter.since) conditions.push(eb('time', '>=', filter.since));
  if (filter.until) conditions.push(eb('time', '<=', filter.until));
  if (filter.text) {
    const needle = filter.text.toLowerCase();
    conditions.push(
      sql<SqlBool>`(instr(lower(coalesce(subject, '')), ${needle}) > 0 or instr(lower(coalesce(json_extract(body, '$.data'), '')), ${needle}) > 0)`,
    );
  }
  for (const [tag, values] of Object.entries(filter.tags ?? {})) {
    const path = `$.data.tags."${tag.replace(/["\\]/g, '')}"`;
    conditions.push(
      sql<SqlBool>`cast(json_extract(body, ${path}) as text) in (${sql.join(values.map((v) => sql`${v}`))})`,
    );
  }
  return conditions;
}

/** All filters AND together (monitor filter, subscription filter, inline filter). */
export function whereFilters(eb: Eb, filters: readonly Filter[]): Expression<SqlBool> {
  const conditions = filters.flatMap((f) => filterConditions(eb, f));
  return eb.and(conditions);
}
