// Shared plumbing of the commands that front an SDK namespace (vault, cir,
// ledger, …): one wrapper turns a VigilError into `vigil: <message>` and an
// exit code (2 for bad arguments, 1 otherwise), waits for product-event
// listeners, and prints results as text or, with --json, as JSON.
import type { CAC } from 'cac';
import { settleEvents } from '../events/channel.ts';
import { UsageError } from './options.ts';
import { VigilError } from '../errors/vigil-error.ts';

export async function runSdkCommand(body: () => unknown | Promise<unknown>): Promise<void> {
  let code = 0;
  try {
    await body();
  } catch (error) {
    const usage = error instanceof UsageError || (error instanceof VigilError && error.code === 'INVALID_ARGUMENT');
    process.stderr.write(`vigil: ${(error as Error).message}\n`);
    code = usage ? 2 : 1;
  }
  await settleEvents();
  if (code !== 0) process.exit(code);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A command whose own help shows its description (cac prints it only in the global help). */
export function sdkCommand(cli: CAC, raw: string, description: string) {
  return cli.command(raw, description).usage(`${raw}\n\n  ${description}`);
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function unknownAction(group: string, action: string, actions: string[]): never {
  throw new UsageError(`${group}: unknown action "${action}"; actions: ${actions.join(', ')}`);
}
