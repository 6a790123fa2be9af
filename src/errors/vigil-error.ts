// The one error type of the SDK. Every call of every namespace fails with a
// VigilError carrying a stable `code` (listed in docs/sdk.md), a message that
// names the field and what is allowed, and optional JSON `details`. Scripts
// see the same three fields; the CLI prints the message and exits with the
// code src/errors/exit-codes.ts maps the `code` to (2 for bad arguments, 3
// when the cloud API does not answer, 124 on a timeout, else 1).

export const errorCodes = [
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'TIMEOUT',
  'VAULT_UNAVAILABLE',
  'CIR_UNAVAILABLE',
  'LEDGER_BROKEN',
  'SEQUENCE_FAILED',
  'OUTPUT_TOO_LARGE',
  'MCP_SERVER_UNKNOWN',
  'MCP_CALL_FAILED',
  'RATCHET_CONFIG',
  'SANDBOX_VIOLATION',
  'SCRIPT_NOT_FOUND',
  'CLOUD_UNAVAILABLE',
  'CLOUD_REFUSED',
  'WORKER_FAILED',
  'INTERNAL',
] as const;
export type VigilErrorCode = (typeof errorCodes)[number];

export class VigilError extends Error {
  override readonly name = 'VigilError';
  constructor(
    readonly code: VigilErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  toJSON(): { code: VigilErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function invalid(field: string, message: string, details: Record<string, unknown> = {}): VigilError {
  return new VigilError('INVALID_ARGUMENT', `${field}: ${message}`, { field, ...details });
}

/** Any thrown value as a VigilError (unknown failures become INTERNAL with the original message). */
export function asVigilError(error: unknown): VigilError {
  if (error instanceof VigilError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new VigilError('INTERNAL', message);
}
