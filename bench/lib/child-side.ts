// The child's half of the ready/go protocol (see children.ts).
import { readFileSync } from 'node:fs';

/** The arguments the parent wrote to the file named on the command line. */
export function childArgs<T>(): T {
  return JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as T;
}

/** Announces readiness and resolves when the parent says go. */
export function readyThenGo(): Promise<void> {
  process.stdout.write('ready\n');
  return new Promise((resolve) => {
    process.stdin.once('data', () => resolve());
  });
}

export function finish(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}
