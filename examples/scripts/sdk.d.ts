// Types of the globals a Vigil script sees (docs/sdk.md), for editors:
// put this file next to your scripts or reference it with
// /// <reference path="sdk.d.ts" />. Every sdk call is synchronous.
// Generated from src/sdk/namespaces by `npm run sdk-types`: do not edit.

interface CaptureInput {
  body: string;
  type?: string;
  domain?: string;
  confidence?: number;
  source?: string;
  tags?: string[];
  scope?: string;
  /** Also store an embedding vector for the signal. */
  embed?: boolean;
}
interface QueryOptions {
  type?: string;
  domain?: string;
  source?: string;
  limit?: number;
  since?: string;
  scope?: string;
}
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
interface SearchOptions {
  type?: string;
  domain?: string;
  limit?: number;
  scope?: string;
}
interface Relation {
  from: string;
  to: string;
  kind: RelationKind;
  created_at: string;
}
interface Pattern {
  id: string;
  type: string;
  body: string;
  recurrence_count: number;
  strength: number;
  signal_ids: string[];
}
interface Contradiction extends CIRSignal {
  /** ids of the signals this one conflicts with */
  contradicts: string[];
}
interface CIRStats {
  signals: number;
  relations: number;
  embeddings: number;
  patterns: number;
  contradictions: number;
  database_size_bytes: number;
}
interface ScopeOption {
  scope?: string;
}
interface SequenceRunOptions {
  vars?: Record<string, string>;
  model?: string;
  backend?: string;
  /** 1-based number of the step to resume from (the recipe's latest run supplies earlier steps). */
  startFrom?: number;
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
interface TemporalStatus extends TemporalEntry {
  timezone: string | null;
  mode: string;
  file: string;
  daemon: {
    pid: number;
    host: string;
  } | null;
  circuit_broken_at: string | null;
  last_firing: {
    run_id: string;
    status: string;
    reason: string | null;
    started: string;
    ended: string | null;
  } | null;
  firings: number;
  skipped: number;
}
interface LedgerVerdict {
  valid: boolean;
  entries: number;
  /** 1-based line of the first entry that breaks the chain. */
  broken?: {
    line: number;
    reason: string;
  };
}
interface LedgerEntry {
  seq: number;
  at: string;
  kind: string;
  data: Record<string, unknown>;
  prev: string;
  hash: string;
}
interface HealthReport {
  ok: boolean;
  components: {
    store: ComponentHealth;
    cir: ComponentHealth;
    vault: ComponentHealth;
    daemon: ComponentHealth;
    server: ComponentHealth;
    backends: Record<string, ComponentHealth>;
  };
}
interface RatchetOptions {
  config?: string;
  source?: string;
}
interface RatchetResult {
  passed: boolean;
  violations: RatchetViolation[];
  counts: Record<string, number>;
}
interface PluginInfo {
  name: string;
  version?: string;
  hooks: string[];
  tools: string[];
}
interface DispatchJob {
  id: string;
  tool: string;
  source: string;
  params: Record<string, unknown>;
  status: JobStatus;
  attempts: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result?: unknown;
  error?: string;
}
interface DispatchToolInfo {
  name: string;
  source: string;
  description?: string;
}
interface WebhookRegistration {
  id: string;
  event: string;
  url: string;
  active: 'true' | 'false';
  created_at: string;
  /** monitor.observation only: the monitor followed. */
  monitor?: string;
  /** monitor.observation only: the observation types delivered (a trailing * matches a prefix); all when absent. */
  types?: string[];
}
interface WebhookTestResult {
  delivered: boolean;
  response_code?: number;
  error?: string;
}
interface DeliveryView {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  response_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}
interface WorkerInfo {
  name: string;
  id: string;
  created_on: string;
  modified_on: string;
}
type RelationKind = (readonly ['supports', 'contradicts', 'derives', 'duplicates'])[number];
interface ComponentHealth {
  ok: boolean;
  detail: string;
}
interface RatchetViolation {
  name: string;
  pattern: string;
  count: number;
  limit: number;
}
type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
interface VigilErrorShape extends Error {
  code: string;
  details: Record<string, unknown>;
}

declare const servers: Record<string, { call(tool: string, args?: Record<string, unknown>): Promise<{ content: Array<{ type: string; text?: string }>; isError?: boolean }> }>;
declare function sleep(ms: number): Promise<void>;

declare const sdk: {
  readonly vars: Readonly<Record<string, string>>;
  readonly workspace: { readonly path: string };
  readonly VigilError: new (code: string, message: string, details?: Record<string, unknown>) => VigilErrorShape;
  cir: {
    capture: (body: string, options?: Omit<CaptureInput, "body"> | undefined) => {
      id: string;
    };
    query: (options?: QueryOptions | undefined) => CIRSignal[];
    search: (text: string, options?: SearchOptions | undefined) => CIRSignal[];
    relate: (from: string, to: string, kind: string) => Relation;
    patterns: (options?: {
      scope?: string;
      min_strength?: number;
      type?: string;
    } | undefined) => Pattern[];
    contradictions: (options?: {
      scope?: string;
    } | undefined) => Contradiction[];
    stats: (options?: {
      scope?: string;
    } | undefined) => CIRStats;
    ingest: (jsonl: string, options?: {
      scope?: string;
      source?: string;
      embed?: boolean;
      file?: string;
    } | undefined) => {
      ingested: number;
      ids: string[];
    };
  };
  vault: {
    get: (key: string, options?: ScopeOption | undefined) => string | null;
    set: (key: string, value: string, options?: ScopeOption | undefined) => void;
    delete: (key: string, options?: ScopeOption | undefined) => boolean;
    list: (options?: ScopeOption | undefined) => string[];
  };
  sequence: {
    run: (name: string, options?: SequenceRunOptions | undefined) => string;
    list: () => {
      name: string;
      type: string;
    }[];
  };
  temporal: {
    list: () => TemporalEntry[];
    status: (name: string) => TemporalStatus;
    enable: (name: string) => void;
    disable: (name: string) => void;
    fire: (name: string) => string;
  };
  ledger: {
    verify: () => LedgerVerdict;
    entries: (limit?: number | undefined) => LedgerEntry[];
  };
  notify: {
    send: (title: string, message: string) => void;
  };
  health: {
    check: () => HealthReport;
  };
  ratchet: {
    check: (options?: RatchetOptions | undefined) => RatchetResult;
    baseline: (options?: RatchetOptions | undefined) => void;
  };
  plugin: {
    list: () => PluginInfo[];
  };
  dispatch: {
    send: (tool: string, params?: Record<string, unknown> | undefined) => {
      id: string;
      status: string;
    };
    status: (id: string) => DispatchJob;
    list: () => DispatchToolInfo[];
  };
  webhook: {
    register: (event: string, url: string, secret: string, follow?: {
      monitor: string;
      types?: string[];
      token?: string;
    } | undefined) => {
      id: string;
      event: string;
      url: string;
      monitor?: string;
      types?: string[];
    };
    list: () => WebhookRegistration[];
    delete: (id: string) => {
      deleted: boolean;
    };
    test: (id: string) => WebhookTestResult;
    deliveries: (id: string) => DeliveryView[];
  };
  worker: {
    create: (name: string, options?: {
      template?: string;
    } | undefined) => {
      name: string;
      path: string;
    };
    deploy: (name: string, options?: {
      minify?: boolean;
    } | undefined) => {
      name: string;
      url: string;
      deployed: boolean;
    };
    list: () => WorkerInfo[];
    status: (name: string) => WorkerInfo;
    delete: (name: string) => {
      deleted: boolean;
    };
    secret: {
      set: (workerName: string, key: string, value: string) => void;
      delete: (workerName: string, key: string) => void;
      list: (workerName: string) => string[];
    };
  };
};
