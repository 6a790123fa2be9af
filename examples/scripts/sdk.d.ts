// Types of the globals a Vigil script sees (docs/sdk.md), for editors:
// put this file next to your scripts or reference it with
// /// <reference path="sdk.d.ts" />. Every sdk call is synchronous.

interface CIRSignal {
  id: string;
  type: string;
  body: string;
  domain?: string;
  confidence?: number;
  source?: string;
  created_at?: string;
  tags?: string[];
  scope?: string;
}
interface CIRStats {
  signals: number;
  relations: number;
  embeddings: number;
  patterns: number;
  contradictions: number;
  database_size_bytes: number;
}
interface TemporalEntry {
  name: string;
  schedule: string;
  target: string;
  enabled: boolean;
  last_run?: string;
  next_run?: string;
  consecutive_failures: number;
  circuit_broken: boolean;
}
interface VigilErrorShape extends Error {
  code: string;
  details: Record<string, unknown>;
}
type Scope = { scope?: string };

declare const sdk: {
  readonly vars: Readonly<Record<string, string>>;
  readonly workspace: { readonly path: string };
  readonly VigilError: new (code: string, message: string, details?: Record<string, unknown>) => VigilErrorShape;
  cir: {
    capture(body: string, options?: Omit<CIRSignal, 'id' | 'body' | 'created_at'> & { embed?: boolean }): { id: string };
    query(options?: { type?: string; domain?: string; source?: string; limit?: number; since?: string; scope?: string }): CIRSignal[];
    search(text: string, options?: { type?: string; domain?: string; limit?: number; scope?: string }): CIRSignal[];
    relate(from: string, to: string, kind: 'supports' | 'contradicts' | 'derives' | 'duplicates'): { from: string; to: string; kind: string; created_at: string };
    patterns(options?: { min_strength?: number; type?: string; scope?: string }): Array<{ id: string; type: string; body: string; recurrence_count: number; strength: number; signal_ids: string[] }>;
    contradictions(options?: Scope): Array<CIRSignal & { contradicts: string[] }>;
    stats(options?: Scope): CIRStats;
    ingest(jsonl: string, options?: { scope?: string; source?: string; embed?: boolean }): { ingested: number; ids: string[] };
  };
  vault: {
    get(key: string, options?: Scope): string | null;
    set(key: string, value: string, options?: Scope): void;
    delete(key: string, options?: Scope): boolean;
    list(options?: Scope): string[];
  };
  sequence: {
    run(name: string, options?: { vars?: Record<string, string>; backend?: string; startFrom?: number }): string;
    list(): Array<{ name: string; type: string }>;
  };
  temporal: {
    list(): TemporalEntry[];
    status(name: string): TemporalEntry & Record<string, unknown>;
    enable(name: string): void;
    disable(name: string): void;
    fire(name: string): string;
  };
  ledger: {
    verify(): { valid: boolean; entries: number; broken?: { line: number; reason: string } };
    entries(limit?: number): Array<{ seq: number; at: string; kind: string; data: Record<string, unknown> }>;
  };
  notify: { send(title: string, message: string): void };
  health: { check(): { ok: boolean; components: Record<string, unknown> } };
  ratchet: {
    check(options?: { config?: string; source?: string }): {
      passed: boolean;
      violations: Array<{ name: string; pattern: string; count: number; limit: number }>;
      counts: Record<string, number>;
    };
    baseline(options?: { config?: string; source?: string }): void;
  };
  plugin: { list(): Array<{ name: string; version?: string; hooks: string[]; tools: string[] }> };
  dispatch: {
    send(tool: string, params?: Record<string, unknown>): { id: string; status: string };
    status(id: string): Record<string, unknown> & { id: string; status: string };
    list(): Array<{ name: string; source: string; description?: string }>;
  };
};

declare const servers: Record<string, { call(tool: string, args?: Record<string, unknown>): Promise<{ content: Array<{ type: string; text?: string }>; isError?: boolean }> }>;
declare function sleep(ms: number): Promise<void>;
