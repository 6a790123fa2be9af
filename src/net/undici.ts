// undici, loaded when a connection is first made: most servers never fetch
// (no network source, no edge worker), and loading it cost every start 15 ms.
import type { Agent, buildConnector, fetch } from 'undici';

export interface Undici {
  Agent: typeof Agent;
  buildConnector: typeof buildConnector;
  fetch: typeof fetch;
}

let loading: Promise<Undici> | null = null;

export function loadUndici(): Promise<Undici> {
  loading ??= import('undici').then(({ Agent, buildConnector, fetch }) => ({ Agent, buildConnector, fetch }));
  return loading;
}
