// What a conformance check is: one rule of protocol.md, run as a black box
// against a base URL. A check fails by throwing; it may return a note (for
// example, which reading of an ambiguous rule the server chose).
import type { Basis } from './basis.ts';
import type { WireClient } from './wire-client.ts';

export interface CheckContext {
  /** The server's protocol root, e.g. `http://127.0.0.1:8130/mp/v0`. */
  readonly base: string;
  readonly http: WireClient;
  /** The vendor segment of the server's identifiers (`ai.vigil` for Vigil): its bookkeeping types are `<vendor>.monitor.<name>`. */
  readonly vendor: string;
  /** The admin token, when the run knows it; admin checks are skipped without it. */
  readonly adminToken?: string;
  /** A fresh id, unique within this run, for monitors and subscribers. */
  unique(prefix: string): string;
}

export interface Check {
  /** `MP-<section>-<rule>`, e.g. `MP-3-duplicate-id`. */
  readonly id: string;
  readonly name: string;
  /** The protocol.md section, e.g. `§3`. */
  readonly section: string;
  /** Checks that wait on the server's clock (lease expiry, mute) get more time. */
  readonly timeoutMs?: number;
  run(ctx: CheckContext): Promise<string | undefined>;
}

/** A check of the suite with what it rests on: the base specification, or a rule of Vigil's own (basis.ts). */
export interface SuiteCheck extends Check {
  readonly basis: Basis;
}

/** A broken rule: the message says what was expected and what came back. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
}

/** Thrown by a check that cannot run here (e.g. no admin token); it neither passes nor fails. */
export class CheckSkipped extends Error {
  override readonly name = 'CheckSkipped';
}

export function check(section: string, id: string, name: string, run: Check['run'], timeoutMs?: number): Check {
  return { id, name, section, run, timeoutMs };
}
