import { randomBytes } from 'node:crypto';
import { redactCredentials } from '../net/redact.ts';
// Every refusal of the protocol is a ProtocolError: it carries its own code,
// HTTP status, JSON-RPC number and recovery fields, and one function turns it
// into a reply body for every door.

export const errorCodes = {
  INVALID_FILTER: { status: 400, rpc: -32000 },
  UNKNOWN_VOCABULARY: { status: 400, rpc: -32001 },
  TIER_NOT_ASSERTABLE: { status: 400, rpc: -32002 },
  INVALID: { status: 400, rpc: -32003 },
  UNAUTHORIZED: { status: 401, rpc: -32005 },
  CAPABILITY_MISSING: { status: 403, rpc: -32004 },
  PROVENANCE_CEILING: { status: 403, rpc: -32014 },
  ORIGIN_REFUSED: { status: 403, rpc: -32015 },
  NOT_FOUND: { status: 404, rpc: -32006 },
  /** Take-next found no subject to take (protocol.md §21). */
  NO_WORK: { status: 404, rpc: -32020 },
  DUPLICATE: { status: 409, rpc: -32007 },
  CURSOR_BACKWARDS: { status: 409, rpc: -32008 },
  LEASE_HELD: { status: 409, rpc: -32010 },
  LEASE_LOST: { status: 409, rpc: -32011 },
  EVIDENCE_REQUIRED: { status: 409, rpc: -32012 },
  UNAVAILABLE: { status: 409, rpc: -32017 },
  DEAD_LETTERED: { status: 409, rpc: -32018 },
  CURSOR_EXPIRED: { status: 410, rpc: -32009 },
  TOO_LARGE: { status: 413, rpc: -32016 },
  OVER_BUDGET: { status: 429, rpc: -32013 },
  STORE_UNAVAILABLE: { status: 503, rpc: -32019 },
  INTERNAL: { status: 500, rpc: -32603 },
} as const;

export type ErrorCode = keyof typeof errorCodes;

export type ErrorBody = { code: ErrorCode; error: string } & Record<string, unknown>;

export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: ErrorCode;
  readonly extra: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}, options?: ErrorOptions) {
    // A refusal is an answer, not a fault: capturing its stack was a tenth of a
    // refused lease claim. Failures of the server itself keep theirs.
    const stackLimit = Error.stackTraceLimit;
    if (code !== 'INTERNAL' && code !== 'STORE_UNAVAILABLE') Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = stackLimit;
    this.code = code;
    this.extra = extra;
  }

  get status(): number {
    return errorCodes[this.code].status;
  }

  get rpcCode(): number {
    return errorCodes[this.code].rpc;
  }

  toBody(): ErrorBody {
    return { code: this.code, error: this.message, ...this.extra };
  }

  /** A copy with more recovery fields (e.g. the seq of the recorded refusal). */
  with(extra: Record<string, unknown>): ProtocolError {
    return new ProtocolError(this.code, this.message, { ...this.extra, ...extra }, { cause: this.cause });
  }
}

export const invalid = (message: string, extra?: Record<string, unknown>) =>
  new ProtocolError('INVALID', message, extra);
export const notFound = (message: string, extra?: Record<string, unknown>) => new ProtocolError('NOT_FOUND', message, extra);
export const unauthorized = (message = 'A valid bearer token is required: send "Authorization: Bearer <token>".') =>
  new ProtocolError('UNAUTHORIZED', message);

/** SQLite failures that mean the state file cannot be used (disk full, I/O, permissions, damage). */
const storeFailureCodes = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|PERM|BUSY|LOCKED)/;

let logInternal = (line: string) => {
  process.stderr.write(`${redactCredentials(line)}\n`);
};

/** Where unexpected failures are logged (the server's log; tests may capture it). */
export function setInternalErrorLog(log: (line: string) => void): void {
  logInternal = (line) => log(redactCredentials(line));
}

/**
 * Turns anything thrown into a ProtocolError. A failure of the state file is
 * 503 STORE_UNAVAILABLE; anything else unexpected is a bug: it is logged with
 * a request id and answered 500 INTERNAL carrying that id, never a silent close.
 */
export function asProtocolError(error: unknown, where = 'request'): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && storeFailureCodes.test(code)) {
    return new ProtocolError('STORE_UNAVAILABLE', 'The state file cannot be used right now; the failure is in the server log.', {}, { cause: error });
  }
  const requestId = randomBytes(6).toString('hex');
  logInternal(`vigil: internal error ${requestId} in ${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return new ProtocolError('INTERNAL', `The server failed while handling this request (a bug); quote request id ${requestId} when reporting it.`, {
    request_id: requestId,
  }, { cause: error });
}
