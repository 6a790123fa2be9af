// The CIR signal store: SQLite (WAL) with FTS5, one file per project
// (.vigil/cir.db) or per user (~/.vigil/cir.db). Synchronous on purpose:
// the SDK's calls are synchronous and a capture is one small transaction.
// Stores are cached per path so a script's many calls share one connection.
import { randomUUID } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { emitEvent } from '../events/channel.ts';
import { invalid, VigilError } from '../errors/vigil-error.ts';
import { cosine, type Embedder, hashedVector, HASHED_MODEL } from './embed.ts';
import { detectContradictions, detectPatterns } from './patterns.ts';
import { CIR_SCHEMA } from './schema.ts';
import type { CaptureInput, CIRSignal, CIRStats, Contradiction, Pattern, QueryOptions, Relation, RelationKind, SearchOptions } from './types.ts';
import { checkCapture, checkLimit, checkQuery, checkRelationKind, checkScope, checkSearch, parseSince } from './validate.ts';

const require = createRequire(import.meta.url);

interface SignalRow {
  id: string;
  scope: string;
  type: string;
  body: string;
  domain: string | null;
  confidence: number | null;
  source: string | null;
  created_at: string;
  tags: string | null;
}

export function toSignal(r: SignalRow): CIRSignal {
  const s: CIRSignal = { id: r.id, type: r.type, body: r.body, created_at: r.created_at, scope: r.scope };
  if (r.domain !== null) s.domain = r.domain;
  if (r.confidence !== null) s.confidence = r.confidence;
  if (r.source !== null) s.source = r.source;
  if (r.tags !== null) s.tags = JSON.parse(r.tags) as string[];
  return s;
}

export class CirStore {
  private readonly db: BetterSqlite3.Database;
  private readonly insert: BetterSqlite3.Statement;
  /** The scope used when a call names none (VIGIL_CIR_SCOPE, else "default"). */
  readonly defaultScope: string;

  constructor(
    readonly path: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.defaultScope = checkScope(env.VIGIL_CIR_SCOPE || undefined, 'default');
    mkdirSync(dirname(path), { recursive: true });
    const Database = require('better-sqlite3') as typeof BetterSqlite3;
    try {
      this.db = new Database(path);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
      this.db.pragma('foreign_keys = ON');
      this.db.exec(CIR_SCHEMA);
    } catch (error) {
      throw new VigilError('CIR_UNAVAILABLE', `cannot open the CIR store ${path}: ${(error as Error).message}`);
    }
    this.insert = this.db.prepare(
      'INSERT INTO signals (id, scope, type, body, domain, confidence, source, created_at, tags) VALUES (@id, @scope, @type, @body, @domain, @confidence, @source, @created_at, @tags)',
    );
  }

  private scope(value: unknown): string {
    return checkScope(value, this.defaultScope);
  }

  /** Stores one signal and emits `cir.capture`. Embeds it with the hashed vector when asked (see embedSignals for a provider). */
  capture(input: CaptureInput, embedder: Embedder | null = null): { id: string } {
    const signals = this.captureMany([input], embedder);
    emitEvent('cir.capture', { ...signals[0]! });
    return { id: signals[0]!.id };
  }

  /** Stores signals in one transaction (all or none); no event. */
  captureMany(inputs: CaptureInput[], embedder: Embedder | null = null): CIRSignal[] {
    const rows = inputs.map((raw, i) => {
      try {
        const s = checkCapture(raw);
        return {
          id: `sig_${randomUUID()}`,
          scope: this.scope(s.scope),
          type: s.type,
          body: s.body,
          domain: s.domain ?? null,
          confidence: s.confidence ?? null,
          source: s.source ?? null,
          created_at: new Date().toISOString(),
          tags: s.tags && s.tags.length > 0 ? JSON.stringify(s.tags) : null,
          embed: s.embed === true,
        };
      } catch (error) {
        if (inputs.length > 1 && error instanceof VigilError) {
          const field = String(error.details.field);
          throw invalid(`signals[${i}].${field}`, error.message.slice(field.length + 2), { index: i });
        }
        throw error;
      }
    });
    this.db.transaction(() => {
      for (const { embed: _e, ...row } of rows) this.insert.run(row);
    })();
    const toEmbed = rows.filter((r) => r.embed).map((r) => r.id);
    if (toEmbed.length > 0 && (!embedder || embedder.model === HASHED_MODEL)) this.storeVectors(toEmbed, HASHED_MODEL, rows.filter((r) => r.embed).map((r) => hashedVector(r.body)));
    return rows.map(({ embed: _e, ...row }) => toSignal(row));
  }

  /** Embeds the given signals with `embedder` (a provider call for configured providers). */
  async embedSignals(ids: string[], embedder: Embedder): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = this.db.prepare(`SELECT id, body FROM signals WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids) as Array<{ id: string; body: string }>;
    const vectors = await embedder.embed(rows.map((r) => r.body));
    this.storeVectors(
      rows.map((r) => r.id),
      embedder.model,
      vectors,
    );
    return rows.length;
  }

  private storeVectors(ids: string[], model: string, vectors: Float32Array[]): void {
    const put = this.db.prepare('INSERT OR REPLACE INTO embeddings (signal_id, model, vector) VALUES (?, ?, ?)');
    this.db.transaction(() => {
      for (const [i, id] of ids.entries()) put.run(id, model, Buffer.from(vectors[i]!.buffer));
    })();
  }

  query(options: QueryOptions = {}): CIRSignal[] {
    checkQuery(options);
    const where = ['scope = ?'];
    const params: unknown[] = [this.scope(options.scope)];
    for (const field of ['type', 'domain', 'source'] as const) {
      if (options[field] !== undefined) {
        where.push(`${field} = ?`);
        params.push(options[field]);
      }
    }
    const since = parseSince(options.since);
    if (since) {
      where.push('created_at >= ?');
      params.push(since);
    }
    params.push(checkLimit(options.limit, 20));
    const sql = `SELECT * FROM signals WHERE ${where.join(' AND ')} ORDER BY created_at DESC, rowid DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...params) as SignalRow[]).map(toSignal);
  }

  /** Full-text search ranked by bm25, blended with cosine similarity where signals have embeddings. */
  search(text: string, options: SearchOptions = {}, queryVector?: Float32Array): CIRSignal[] {
    checkSearch(text, options);
    const terms = text.match(/[\p{L}\p{N}_]+/gu) ?? [];
    if (terms.length === 0) throw invalid('text', 'must contain at least one letter or digit');
    const match = terms.map((t) => `"${t}"`).join(' OR ');
    const where = ['signals_fts MATCH ?', 's.scope = ?'];
    const params: unknown[] = [match, this.scope(options.scope)];
    for (const field of ['type', 'domain'] as const) {
      if (options[field] !== undefined) {
        where.push(`s.${field} = ?`);
        params.push(options[field]);
      }
    }
    const limit = checkLimit(options.limit, 20);
    const rows = this.db
      .prepare(
        `SELECT s.*, bm25(signals_fts) AS rank, e.vector AS vector FROM signals_fts JOIN signals s ON s.rowid = signals_fts.rowid
         LEFT JOIN embeddings e ON e.signal_id = s.id WHERE ${where.join(' AND ')} ORDER BY rank LIMIT ?`,
      )
      .all(...params, Math.max(limit * 5, 50)) as Array<SignalRow & { rank: number; vector: Buffer | null }>;
    const qv = queryVector ?? hashedVector(text);
    const best = rows.length > 0 ? Math.min(...rows.map((r) => r.rank)) : 0;
    const scored = rows.map((r) => {
      // bm25 is negative, lower is better: scale to 0..1 against the best hit.
      const lexical = best < 0 ? r.rank / best : 1;
      const vec = r.vector ? new Float32Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength / 4) : null;
      const semantic = vec && vec.length === qv.length ? cosine(vec, qv) : 0;
      return { row: r, score: vec ? 0.6 * lexical + 0.4 * semantic : lexical };
    });
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, limit).map(({ row: { rank: _r, vector: _v, ...r } }) => toSignal(r));
  }

  relate(from: string, to: string, kind: RelationKind): Relation {
    const k = checkRelationKind(kind);
    if (from === to) throw invalid('to', 'must differ from "from" (a signal cannot relate to itself)');
    for (const [field, id] of [
      ['from', from],
      ['to', to],
    ] as const) {
      if (typeof id !== 'string' || !this.db.prepare('SELECT 1 FROM signals WHERE id = ?').get(id)) {
        throw new VigilError('NOT_FOUND', `${field}: no signal "${String(id)}"`, { field });
      }
    }
    const created_at = new Date().toISOString();
    this.db.prepare('INSERT OR IGNORE INTO relations (from_id, to_id, kind, created_at) VALUES (?, ?, ?, ?)').run(from, to, k, created_at);
    return { from, to, kind: k, created_at };
  }

  relations(id: string): Relation[] {
    return (this.db.prepare('SELECT from_id, to_id, kind, created_at FROM relations WHERE from_id = ? OR to_id = ?').all(id, id) as Array<Record<string, string>>).map(
      (r) => ({ from: r.from_id!, to: r.to_id!, kind: r.kind as RelationKind, created_at: r.created_at! }),
    );
  }

  private scopeSignals(scope: string, max = 5000): CIRSignal[] {
    return (this.db.prepare('SELECT * FROM signals WHERE scope = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(scope, max) as SignalRow[]).map(toSignal);
  }

  /** Detects recurring signals of one type, stores them as the scope's patterns and returns those at or above `minStrength`. */
  patterns(options: { scope?: string; minStrength?: number; type?: string } = {}): Pattern[] {
    const scope = this.scope(options.scope);
    const min = options.minStrength ?? 0;
    if (typeof min !== 'number' || min < 0 || min > 1) throw invalid('min_strength', `must be a number from 0.0 to 1.0; got ${JSON.stringify(min)}`);
    const found = detectPatterns(this.scopeSignals(scope));
    const now = new Date().toISOString();
    const put = this.db.prepare('INSERT INTO patterns (id, scope, type, body, recurrence_count, strength, signal_ids, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM patterns WHERE scope = ?').run(scope);
      for (const p of found) put.run(p.id, scope, p.type, p.body, p.recurrence_count, p.strength, JSON.stringify(p.signal_ids), now);
    })();
    return found.filter((p) => p.strength >= min && (options.type === undefined || p.type === options.type));
  }

  contradictions(options: { scope?: string } = {}): Contradiction[] {
    const scope = this.scope(options.scope);
    const related = this.db
      .prepare(
        `SELECT r.from_id, r.to_id FROM relations r JOIN signals a ON a.id = r.from_id JOIN signals b ON b.id = r.to_id
         WHERE r.kind = 'contradicts' AND (a.scope = ? OR b.scope = ?)`,
      )
      .all(scope, scope) as Array<{ from_id: string; to_id: string }>;
    const pairs = [...related.map((r) => [r.from_id, r.to_id] as [string, string]), ...detectContradictions(this.scopeSignals(scope))];
    const partners = new Map<string, Set<string>>();
    for (const [a, b] of pairs) {
      (partners.get(a) ?? partners.set(a, new Set()).get(a)!).add(b);
      (partners.get(b) ?? partners.set(b, new Set()).get(b)!).add(a);
    }
    if (partners.size === 0) return [];
    const ids = [...partners.keys()];
    const rows = this.db.prepare(`SELECT * FROM signals WHERE id IN (${ids.map(() => '?').join(',')}) ORDER BY created_at DESC`).all(...ids) as SignalRow[];
    return rows.map((r) => ({ ...toSignal(r), contradicts: [...partners.get(r.id)!].sort() }));
  }

  /** Counts over every scope, or one scope when named. */
  stats(options: { scope?: string } = {}): CIRStats {
    const scoped = options.scope !== undefined;
    const scope = scoped ? this.scope(options.scope) : null;
    const count = (sql: string): number => (this.db.prepare(sql).get(...(scoped ? [scope] : [])) as { n: number }).n;
    const w = scoped ? ' WHERE scope = ?' : '';
    const scopesForContradictions = scoped ? [scope!] : (this.db.prepare('SELECT DISTINCT scope FROM signals').all() as Array<{ scope: string }>).map((r) => r.scope);
    const contradictions = new Set<string>();
    for (const s of scopesForContradictions) for (const c of this.contradictions({ scope: s })) contradictions.add(c.id);
    let size = 0;
    for (const suffix of ['', '-wal']) {
      try {
        size += statSync(this.path + suffix).size;
      } catch {
        // no WAL file at this moment
      }
    }
    return {
      signals: count(`SELECT count(*) AS n FROM signals${w}`),
      relations: count(scoped ? 'SELECT count(*) AS n FROM relations r JOIN signals s ON s.id = r.from_id WHERE s.scope = ?' : 'SELECT count(*) AS n FROM relations'),
      embeddings: count(scoped ? 'SELECT count(*) AS n FROM embeddings e JOIN signals s ON s.id = e.signal_id WHERE s.scope = ?' : 'SELECT count(*) AS n FROM embeddings'),
      patterns: count(`SELECT count(*) AS n FROM patterns${w}`),
      contradictions: contradictions.size,
      database_size_bytes: size,
    };
  }

  unembedded(ids: string[]): string[] {
    if (ids.length === 0) return [];
    const have = new Set(
      (this.db.prepare(`SELECT signal_id FROM embeddings WHERE signal_id IN (${ids.map(() => '?').join(',')})`).all(...ids) as Array<{ signal_id: string }>).map((r) => r.signal_id),
    );
    return ids.filter((id) => !have.has(id));
  }

  close(): void {
    this.db.close();
  }
}
