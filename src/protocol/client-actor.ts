// Who a Vigil client says acted, as an observation's `actor` (§5): the client
// itself, always as an agent principal — `agent:vigil-publish/<user>@<host>`,
// `agent:sentinel/<name>@<host>`, `agent:vigil-run/<run>/<step>` — never a
// person's name. A token holds its owner's name only, so a client claims no
// human principal; where the owner is a person, the client publishes on the
// owner's behalf (`on_behalf_of`), which the owner's token permits, and the
// observation stays attributed to that person.
import { hostname, userInfo } from 'node:os';
import { principalKind } from './principal.ts';

/** A name part as it may stand in a principal: word characters, `.`, `@`, `+` and `-`, at most 80. */
const part = (value: string): string => value.replace(/[^\w.@+-]+/g, '-').slice(0, 80) || '-';

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'unknown';
  }
}

const host = (): string => part(hostname());

/** `vigil publish` run by this machine's user. */
export const publishActor = (): string => `agent:vigil-publish/${part(localUser())}@${host()}`;

/** A sentinel or temporal recipe fired by the daemon (or by hand) on this machine. */
export const triggerActor = (kind: 'sentinel' | 'temporal', name: string): string => `agent:${kind}/${part(name)}@${host()}`;

/** What a trigger string (`temporal:<name>`, `sentinel:<name>:<seq>`) names as its actor. */
export function actorOfTrigger(trigger: string): string {
  const [kind, name] = trigger.split(':');
  return kind === 'sentinel' || kind === 'temporal' ? triggerActor(kind, name ?? '') : `agent:vigil-daemon@${host()}`;
}

/** A recipe run, or one step of it. */
export const runActor = (runId: string, step?: string): string => `agent:vigil-run/${part(runId)}${step === undefined ? '' : `/${part(step)}`}`;

/** Any other Vigil client on this machine (the daemon, `vigil notify`). */
export const toolActor = (tool: string): string => `agent:${part(tool)}@${host()}`;

/**
 * What a client adds to its own `actor` to stay within what the owner's token permits: on a
 * person's monitor it publishes on that person's behalf (the observation is attributed to them);
 * on any other monitor, nothing.
 */
export function onBehalfOfOwner(owner: string | null | undefined): { on_behalf_of?: string } {
  return owner && principalKind(owner) === 'human' ? { on_behalf_of: owner } : {};
}
