// An AbortController whose signal every piece of work in progress listens to
// (a run's children and steps, a server's requests): as many listeners as
// there is work at once is no leak, and Node would warn of one on stderr past
// ten. Not 0 for unlimited: Node 20's getMaxListeners throws on a signal set to 0.
import { setMaxListeners } from 'node:events';

export function sharedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(100_000, controller.signal);
  return controller;
}
