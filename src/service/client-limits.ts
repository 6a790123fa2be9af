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
  /** The same, for every client without a token taken together (rotating addresses and networks gains nothing past these). */
  readonly anonymous_creates_per_minute: number;
  readonly anonymous_monitors: number;
  readonly anonymous_subscribes_per_minute: number;
  readonly anonymous_subscriptions: number;
  readonly anonymous_refusals_recorded_per_minute: number;
  /** Apply the limits to loopback clients too (off by default: local tools are trusted). */
  readonly loopback: boolean;
}

export const defaultClientLimits: ClientLimitSettings = {
  creates_per_minute: 60,
  monitors_per_client: 1000,
  subscribes_per_minute: 120,
  subscriptions_per_client: 5000,
  refusals_recorded_per_minute: 60,
  anonymous_creates_per_minute: 600,
  anonymous_monitors: 20_000,
  anonymous_subscribes_per_minute: 1200,
  anonymous_subscriptions: 100_000,
  anonymous_refusals_recorded_per_minute: 600,
  loopback: false,
};

export const clientLimitNames = Object.keys(defaultClientLimits).filter((k) => k !== 'loopback') as Array<
  Exclude<keyof ClientLimitSettings, 'loopback'>
>;

type Rate = 'creates_per_minute' | 'subscribes_per_minute' | 'refusals_recorded_per_minute';
type Cap = 'monitors_per_client' | 'subscriptions_per_client';
type Limit = Exclude<keyof ClientLimitSettings, 'loopback'>;

/** The everyone-together limit that goes with each per-client one. */
const anonymousLimit: Record<Rate | Cap, Limit> = {
  creates_per_minute: 'anonymous_creates_per_minute',
  monitors_per_client: 'anonymous_monitors',
  subscribes_per_minute: 'anonymous_subscribes_per_minute',
  subscriptions_per_client: 'anonymous_subscriptions',
  refusals_recorded_per_minute: 'anonymous_refusals_recorded_per_minute',
};

interface ClientState {
  readonly tokens: Partial<Record<Rate, { level: number; at: number }>>;
  readonly counts: Partial<Record<Cap, number>>;
}

/** One budget a request is counted against: its address, its address's network, or everyone without a token. */
interface Scope {
  readonly state: ClientState;
  /** How a refusal names who spent the budget. */
  readonly who: string;
  readonly everyone: boolean;
}

const untokened = (scope: Scope) => (scope.everyone ? '' : ' without a token');

/** Most addresses and networks remembered; the oldest is forgotten first (its budget starts afresh). */
const maxClients = 100_000;

export class ClientLimits {
  private readonly clients = new Map<string, ClientState>();
  private readonly everyone: ClientState = { tokens: {}, counts: {} };
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
    const scopes = this.scopesOf(address);
    const rate = 'refusals_recorded_per_minute';
    if (!scopes || scopes.every((scope) => this.wait(scope, rate) === undefined)) {
      for (const scope of scopes ?? []) this.bucket(scope, rate).level -= 1;
      return true;
    }
    this.refusalsCounted++;
    return false;
  }

  private admit(address: string | undefined, rate: Rate, cap: Cap, what: string): void {
    const scopes = this.scopesOf(address);
    if (!scopes) return;
    // Every budget is checked before any is spent: a refusal costs none of them.
    for (const scope of scopes) {
      const limit = this.limitOf(scope, cap);
      const made = scope.state.counts[cap] ?? 0;
      if (made >= this.settings[limit]) {
        throw new ProtocolError('OVER_BUDGET', `${scope.who} ${scope.everyone ? 'have' : 'has'} made ${made} ${what}${untokened(scope)}, the most allowed (${limit} ${this.settings[limit]}).`, {
          limit,
          limit_value: this.settings[limit],
        });
      }
    }
    for (const scope of scopes) {
      const wait = this.wait(scope, rate);
      if (wait !== undefined) {
        const limit = this.limitOf(scope, rate);
        throw new ProtocolError('OVER_BUDGET', `${scope.who} may make ${this.settings[limit]} ${what} per minute${untokened(scope)}; try again in ${wait} s.`, {
          limit,
          limit_value: this.settings[limit],
          retry_after_s: wait,
        });
      }
    }
    for (const scope of scopes) {
      this.bucket(scope, rate).level -= 1;
      scope.state.counts[cap] = (scope.state.counts[cap] ?? 0) + 1;
    }
  }

  private limitOf(scope: Scope, limit: Rate | Cap): Limit {
    return scope.everyone ? anonymousLimit[limit] : limit;
  }

  /** The scope's bucket for `rate`, refilled to now. */
  private bucket(scope: Scope, rate: Rate): { level: number; at: number } {
    const perMinute = this.settings[this.limitOf(scope, rate)];
    const now = this.now();
    const bucket = scope.state.tokens[rate] ?? { level: perMinute, at: now };
    bucket.level = Math.min(perMinute, bucket.level + ((now - bucket.at) / 60_000) * perMinute);
    bucket.at = now;
    scope.state.tokens[rate] = bucket;
    return bucket;
  }

  /** undefined when a token is free, else the whole seconds until one is. */
  private wait(scope: Scope, rate: Rate): number | undefined {
    const bucket = this.bucket(scope, rate);
    if (bucket.level >= 1) return undefined;
    return Math.max(1, Math.ceil(((1 - bucket.level) * 60) / this.settings[this.limitOf(scope, rate)]));
  }

  /**
   * The budgets a request from `address` counts against, or undefined when it is not limited. One machine can
   * speak from a whole network of addresses (200 loopback or IPv6 addresses cost nothing), so its /24 or /64
   * shares one budget, and every client without a token together has another.
   */
  private scopesOf(address: string | undefined): Scope[] | undefined {
    if (address === undefined || (!this.settings.loopback && isLoopback(address))) return undefined;
    const network = networkOf(address);
    const scopes: Scope[] = [{ state: this.stateOf(address), who: 'This client address', everyone: false }];
    if (network !== address) scopes.push({ state: this.stateOf(network), who: `This client's network (${network})`, everyone: false });
    scopes.push({ state: this.everyone, who: 'All clients without a token together', everyone: true });
    return scopes;
  }

  private stateOf(key: string): ClientState {
    let state = this.clients.get(key);
    if (!state) {
      if (this.clients.size >= maxClients) this.clients.delete(this.clients.keys().next().value as string);
      state = { tokens: {}, counts: {} };
      this.clients.set(key, state);
    }
    return state;
  }
}

/** The /24 of an IPv4 address (IPv4-mapped too) or the /64 of an IPv6 one; anything else is itself. */
export function networkOf(address: string): string {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/i.exec(address);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  if (!address.includes(':')) return address;
  const bare = address.replace(/%.*$/, '').toLowerCase();
  const [head = '', tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  if (groups.length < 4) return address;
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16)).join(':')}::/64`;
}
