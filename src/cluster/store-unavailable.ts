// A request that could not read PostgreSQL is refused 503 STORE_UNAVAILABLE
// before anything changed (the HTTP door adds Retry-After): the database is
// restarting, unreachable or refusing sessions. What is not a connection
// failure is also logged, with its stack, for whoever reads the server log.
import { redactCredentials } from '../net/redact.ts';
import { ProtocolError } from '../protocol/errors.ts';
import { isStoreFailure } from '../store/postgres/pg-connection.ts';

export function storeUnavailable(error: unknown, url: string, log: (line: string) => void): unknown {
  if (error instanceof ProtocolError) return error;
  if (!isStoreFailure(error)) log(`vigil: catching up from PostgreSQL failed: ${(error as Error).stack ?? error}`);
  return new ProtocolError(
    'STORE_UNAVAILABLE',
    `PostgreSQL (${redactCredentials(url)}) cannot be used right now (${(error as Error).message}); nothing was changed. Try again shortly.`,
    {},
    { cause: error },
  );
}
