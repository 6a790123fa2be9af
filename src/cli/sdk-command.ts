// Shared plumbing of the commands that front an SDK namespace (vault, cir,
// ledger, …): one wrapper turns an error into `vigil: <message>` and the exit
// code of the one table (src/errors/exit-codes.ts), waits for product-event
// listeners, and prints results as text or, with --json, as JSON.
import { settleEvents } from '../events/channel.ts';
import { exitCodeOf } from '../errors/exit-codes.ts';
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

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function unknownAction(group: string, action: string, actions: string[]): never {
  throw new UsageError(`${group}: unknown action "${action}"; actions: ${actions.join(', ')}`);
}
