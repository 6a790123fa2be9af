// Shared plumbing of the commands that front an SDK namespace (vault, cir,
// ledger, …): one wrapper turns an error into `vigil: <message>` and the exit
// code of the one table (src/errors/exit-codes.ts), waits for product-event
// listeners, and prints results as text or, with --json, as JSON.
import { settleEvents } from '../events/channel.ts';
import { exitCodeOf } from '../errors/exit-codes.ts';
import { invalid } from '../errors/vigil-error.ts';
import { UsageError } from './options.ts';

export async function runSdkCommand(body: () => unknown | Promise<unknown>): Promise<void> {
  let code = 0;
  try {
    await body();
  } catch (error) {
    process.stderr.write(`vigil: ${(error as Error).message}\n`);
    code = exitCodeOf(error);
  }
  await settleEvents();
  if (code !== 0) process.exit(code);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Standard input as text, for `field`, which takes at most `maxChars` characters: reading stops once more
 * has come than that many can take (4 bytes each in UTF-8), so a runaway pipe cannot fill memory. The
 * field's own check then counts the characters.
 */
export async function readStdin(field: string, maxChars: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxChars * 4) throw invalid(field, `must be at most ${maxChars.toLocaleString('en-US')} characters; standard input held more`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function unknownAction(group: string, action: string, actions: string[]): never {
  throw new UsageError(`${group}: unknown action "${action}"; actions: ${actions.join(', ')}`);
}
