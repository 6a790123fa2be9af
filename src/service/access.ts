// Who may see and change what (§3, §9, §13). A monitor the caller may not
// see is "not found", never "unauthorized": its existence is not disclosed.
import { notFound, unauthorized } from '../protocol/errors.ts';
import type { Feed } from './feed.ts';
import type { MonitorService } from './service.ts';
import { secretMatches, tokenMatches } from './tokens.ts';

export interface Caller {
  readonly bearer?: string;
  /** The client's network address (HTTP doors only), for per-client limits. */
  readonly address?: string;
}

export const isOwner = (feed: Feed, caller: Caller) => tokenMatches(caller.bearer, feed.ownerTokenHash);

export const holdsSubscribeToken = (feed: Feed, caller: Caller) =>
  tokenMatches(caller.bearer, feed.subscribeTokenHash);

export function canSee(feed: Feed, caller: Caller): boolean {
  switch (feed.definition.visibility) {
    case 'public':
      return true;
    case 'shared':
      return isOwner(feed, caller) || holdsSubscribeToken(feed, caller);
    default:
      return isOwner(feed, caller);
  }
}

const noSuchMonitor = (id: string) => notFound(`No monitor "${id}" is visible to this token.`);

export function visibleFeed(service: MonitorService, id: string, caller: Caller): Feed {
  const feed = service.feed(id);
  if (!feed || !canSee(feed, caller)) throw noSuchMonitor(id);
  return feed;
}

/** The feed, when the caller holds its owner token. */
export function ownedFeed(service: MonitorService, id: string, caller: Caller): Feed {
  const feed = visibleFeed(service, id, caller);
  if (!isOwner(feed, caller)) {
    throw caller.bearer
      ? unauthorized(`This token is not the owner token of monitor "${id}".`)
      : unauthorized(`Monitor "${id}" needs its owner token: send "Authorization: Bearer <owner token>".`);
  }
  return feed;
}

/** True when the server has an admin token and the caller presents it. */
export function isAdmin(service: MonitorService, caller: Caller): boolean {
  const expected = service.options.adminToken;
  return expected !== undefined && secretMatches(caller.bearer, expected);
}

export function requireAdmin(service: MonitorService, caller: Caller): void {
  const expected = service.options.adminToken;
  if (!expected) throw notFound('Administration is not enabled on this server (start it with --allow-admin).');
  if (!secretMatches(caller.bearer, expected)) {
    throw unauthorized('The admin endpoints need the admin token given with --allow-admin (or printed when the server started).');
  }
}
