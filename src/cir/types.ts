// Shapes of the CIR signal store (seed: CIRSignal, CIRStats; recipes-and-sdk §4).

export interface CIRSignal {
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

export interface CIRStats {
  signals: number;
  relations: number;
  embeddings: number;
  patterns: number;
  contradictions: number;
  database_size_bytes: number;
}

export interface CaptureInput {
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

export interface QueryOptions {
  type?: string;
  domain?: string;
  source?: string;
  limit?: number;
  since?: string;
  scope?: string;
}

export interface SearchOptions {
  type?: string;
  domain?: string;
  limit?: number;
  scope?: string;
}

export const relationKinds = ['supports', 'contradicts', 'derives', 'duplicates'] as const;
export type RelationKind = (typeof relationKinds)[number];

export interface Relation {
  from: string;
  to: string;
  kind: RelationKind;
  created_at: string;
}

export interface Pattern {
  id: string;
  type: string;
  body: string;
  recurrence_count: number;
  strength: number;
  signal_ids: string[];
}

export interface Contradiction extends CIRSignal {
  /** ids of the signals this one conflicts with */
  contradicts: string[];
}
