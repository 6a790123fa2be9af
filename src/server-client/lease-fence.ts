// A lease held while some work runs: renewed three times per lease with the
// grant's fence, and lost when a renewal answers LEASE_LOST or NOT_FOUND, or
// when no renewal has succeeded by the lease's expiry (the server unreachable,
// this process paused). The expiry is counted from when the last successful
// call was sent, so it is never later than the server's. A sentinel's
// reaction is fenced by it (its target's group killed, the run `fenced`; each
// success tells the target's guard how long it may still run, so the guard
// kills the group on time by itself even while the daemon is stopped); a
// runner's concurrency slot says it lost its slot.
import type { Clock } from '../timing/clock.ts';
import { codeOf } from './protocol-client.ts';

export interface LeaseFenceInput {
  clock: Clock;
  leaseSeconds: number;
  subject: string;
  /** When the claim that granted the lease was sent (ms). */
  grantSentAt: number;
  /** Renews the lease with the grant's fence; throws the server's refusal. */
  renew(): Promise<unknown>;
}

export class LeaseFence {
  private readonly controller = new AbortController();
  private expiresAt: number;
  private renewTimer: unknown;
  private expiryTimer: unknown;
  private stopped = false;
  private readonly listeners = new Set<(secondsLeft: number) => void>();
  /** Why the lease was lost; null while it holds. */
  lostReason: string | null = null;

  constructor(private readonly input: LeaseFenceInput) {
    this.expiresAt = input.grantSentAt + input.leaseSeconds * 1000;
    this.armRenewal();
    this.armExpiry();
  }

  /** Aborted when the lease is lost. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get renewEveryMs(): number {
    return Math.max(100, Math.floor((this.input.leaseSeconds * 1000) / 3));
  }

  /** Seconds the target may still run, now. */
  secondsLeft(): number {
    return Math.max(0, (this.expiresAt - this.input.clock.now()) / 1000);
  }

  /** Told the seconds left after each successful renewal. */
  onRenewed(listener: (secondsLeft: number) => void): void {
    this.listeners.add(listener);
  }

  /** True when the lease is lost, or its expiry has passed without a renewal (checked now, not when a timer runs). */
  lost(): boolean {
    if (!this.lostReason && this.input.clock.now() >= this.expiresAt) this.lose(`no renewal of the lease on "${this.input.subject}" succeeded by its expiry`);
    return this.lostReason !== null;
  }

  stop(): void {
    this.stopped = true;
    this.input.clock.clearTimeout(this.renewTimer);
    this.input.clock.clearTimeout(this.expiryTimer);
  }

  private lose(reason: string): void {
    if (this.lostReason) return;
    this.lostReason = reason;
    this.stop();
    this.controller.abort();
  }

  private armRenewal(): void {
    this.renewTimer = this.input.clock.setTimeout(() => void this.renewNow(), this.renewEveryMs);
  }

  private armExpiry(): void {
    this.input.clock.clearTimeout(this.expiryTimer);
    this.expiryTimer = this.input.clock.setTimeout(() => this.lost(), Math.max(0, this.expiresAt - this.input.clock.now()));
  }

  private async renewNow(): Promise<void> {
    if (this.stopped) return;
    // A renewal that comes due after the expiry (this runner was stopped) is too late whatever it answers.
    if (this.lost()) return;
    const sentAt = this.input.clock.now();
    try {
      await this.input.renew();
      if (this.stopped || this.lost()) return;
      this.expiresAt = sentAt + this.input.leaseSeconds * 1000;
      this.armExpiry();
      for (const l of this.listeners) l(this.secondsLeft());
    } catch (error) {
      // Stopped meanwhile (the work ended and the lease was completed): whatever a late renewal answers is moot.
      if (this.stopped) return;
      const code = codeOf(error);
      if (code === 'LEASE_LOST' || code === 'NOT_FOUND') return this.lose(`the lease on "${this.input.subject}" was lost: ${(error as Error).message}`);
      // Unreachable or refused for a while: the next renewal may get through before the expiry.
    }
    if (!this.stopped) this.armRenewal();
  }
}
