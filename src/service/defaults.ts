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
} as const;
