// Assertions for checks. Each failure message names the request and shows a
// short excerpt of what came back, so a reader can act on the report alone.
import { CheckFailure } from './check.ts';
import type { WireReply } from './wire-client.ts';
import type { Wire } from './wire-client.ts';

export function excerpt(value: unknown, max = 200): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function fail(message: string): never {
  throw new CheckFailure(message);
}

export function ensure(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message);
}

export function equal(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    fail(`${what}: expected ${excerpt(expected)}, got ${excerpt(actual)}`);
  }
}

/** A positive control: the request is accepted with `status`. */
export function accepted(reply: WireReply, status: number | readonly number[], what: string): Wire {
  const allowed = typeof status === 'number' ? [status] : status;
  if (!allowed.includes(reply.status)) fail(`${what} should be accepted (${allowed.join('/')}): ${reply.label} ${excerpt(reply.body)}`);
  return reply.body;
}

/**
 * A negative control: refused with `status` and `code`, in the §1 error shape
 * `{code, error}`. Returns the error body for checks of extra fields.
 */
export function refused(reply: WireReply, status: number, code: string, what: string): Wire {
  if (reply.status !== status || reply.body?.code !== code) {
    fail(`${what} should be refused with ${status} ${code}: ${reply.label} ${excerpt(reply.body)}`);
  }
  if (typeof reply.body.error !== 'string' || reply.body.error.length === 0) {
    fail(`${what}: error body lacks a non-empty "error" sentence: ${excerpt(reply.body)}`);
  }
  return reply.body;
}

export function hasKeys(value: unknown, keys: readonly string[], what: string): void {
  ensure(value !== null && typeof value === 'object', `${what} is not an object: ${excerpt(value)}`);
  const missing = keys.filter((k) => !(k in (value as object)));
  if (missing.length > 0) fail(`${what} lacks ${missing.join(', ')}: ${excerpt(value, 300)}`);
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
