// Per-client-address limits for what anyone may do without a token (issue
// 15): creating monitors, subscribing to public monitors, and having refused
// writes stored as rows. Token buckets refill continuously; counts are caps
// for this server's run. The table of addresses is bounded itself.
import { ProtocolError } from '../protocol/errors.ts';
import { isLoopback } from './loopback.ts';

export interface ClientLimitSettings {
  readonly creates_per_minute: number;
  readonly monitors_per_client: number;
  readonly subscribes_per_minute: number;
  readonly subscriptions_per_client: number;
  /** Refused anonymous writes stored as `rejected` rows; past this rate they are only counted. */
  readonly refusals_recorded_per_minute: number;
  /** Apply the limits to loopback clients too (off by default: local tools are trusted). */
  readonly loopback: boolean;
}

export const defaultClientLimits: ClientLimitSettings = {
  creates_per_minute: 60,
  monitors_per_client: 1000,
  subscribes_per_minute: 120,
  subscriptions_per_client: 5000,
  refusals_recorded_per_minute: 60,
  loopback: false,
};

export const clientLimitNames = Object.keys(defaultClientLimits).filter((k) => k !== 'loopback') as Array<
  Exclude<keyof ClientLimitSettings, 'loopback'>
>;

type Rate = 'creates_per_minute' | 'subscribes_per_minute' | 'refusals_recorded_per_minute';
type Cap = 'monitors_per_client' | 'subscriptions_per_client';

interface ClientState {
  readonly tokens: Partial<Record<Rate, { level: number; at: number }>>;
  readonly counts: Partial<Record<Cap, number>>;
}

/** Most addresses remembered; the oldest is forgotten first (its budget starts afresh). */
const maxClients = 100_000;

export class ClientLimits {
  private readonly clients = new Map<string, ClientState>();
  /** Refusals that were counted but not stored, since start. */
  refusalsCounted = 0;

  constructor(
    readonly settings: ClientLimitSettings,
    private readonly now: () => number,
  ) {}

  /** Takes one monitor creation from `address`'s budget, or refuses with 429. */
  admitCreate(address: string | undefined): void {
    this.admit(address, 'creates_per_minute', 'monitors_per_client', 'monitors');
  }

  /** Takes one subscription made without a privileged token, or refuses with 429. */
  admitSubscribe(address: string | undefined): void {
    this.admit(address, 'subscribes_per_minute', 'subscriptions_per_client', 'subscriptions');
  }

  /** Whether an anonymous refusal from `address` may still be stored as a row. */
  mayRecordRefusal(address: string | undefined): boolean {
    const state = this.stateOf(address);
    if (!state || this.take(state, 'refusals_recorded_per_minute') === undefined) return true;
    this.refusalsCounted++;
    return false;
  }

  private admit(address: string | undefined, rate: Rate, cap: Cap, what: string): void {
    const state = this.stateOf(address);
    if (!state) return;
    const made = state.counts[cap] ?? 0;
    if (made >= this.settings[cap]) {
      throw new ProtocolError('OVER_BUDGET', `This client address has made ${made} ${what} without a token, the most allowed (${cap} ${this.settings[cap]}).`, {
        limit: cap,
        limit_value: this.settings[cap],
      });
    }
    const wait = this.take(state, rate);
    if (wait !== undefined) {
      throw new ProtocolError('OVER_BUDGET', `This client address may make ${this.settings[rate]} ${what} per minute without a token; try again in ${wait} s.`, {
        limit: rate,
        limit_value: this.settings[rate],
        retry_after_s: wait,
      });
    }
    state.counts[cap] = made + 1;
  }

  /** Takes a token; undefined when taken, else the whole seconds until one is free. */
  private take(state: ClientState, rate: Rate): number | undefined {
    const perMinute = this.settings[rate];
    const now = this.now();
    const bucket = state.tokens[rate] ?? { level: perMinute, at: now };
    bucket.level = Math.min(perMinute, bucket.level + ((now - bucket.at) / 60_000) * perMinute);
    bucket.at = now;
    state.tokens[rate] = bucket;
    if (bucket.level >= 1) {
      bucket.level -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil(((1 - bucket.level) * 60) / perMinute));
  }

  private stateOf(address: string | undefined): ClientState | undefined {
    if (address === undefined || (!this.settings.loopback && isLoopback(address))) return undefined;
    let state = this.clients.get(address);
    if (!state) {
      if (this.clients.size >= maxClients) this.clients.delete(this.clients.keys().next().value as string);
      state = { tokens: {}, counts: {} };
      this.clients.set(address, state);
    }
    return state;
  }
}
