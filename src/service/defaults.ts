// The protocol's defaults and limits (§2, §9, §12). Apart from the service so
// that the command line can show them without loading the server.
export const defaults = {
  retireAfterMuteSeconds: 604800,
  maxBodyBytes: 1048576,
  maxLimit: 1000,
  defaultLimit: 50,
  maxWaitSeconds: 50,
  leaseSeconds: 300,
  deliveryCountLimit: 5,
  ttlMs: 3600000,
  rawCutBytes: 16 * 1024,
  heartbeatMs: 15_000,
  /** A pull page stops early once its observations hold this many bytes (it always holds at least one). */
  maxPageBytes: 1024 * 1024,
  /**
   * An event stream reads and writes at most about this many bytes at a time, and reads on only once its
   * connection has taken them: a backlog of any size goes out in pieces, never queued whole.
   */
  streamPieceBytes: 256 * 1024,
  maxBatchCalls: 100,
  /** A JSON-RPC batch stops running calls once its replies hold this many bytes. */
  maxBatchReplyBytes: 4 * 1024 * 1024,
  /** A cluster node's replica size (MB) past which its cold monitors are dropped from it (--replica-budget). */
  replicaBudgetMB: 512,
  /** The pooled PostgreSQL sessions a cluster node opens at most (--store-sessions); it holds 3 more of its own. */
  storeSessions: 8,
} as const;
