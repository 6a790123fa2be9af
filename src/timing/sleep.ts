// Waiting that a signal may cut short, leaving no listener behind. The daemon's
// sentinels and `vigil watch` wait a second between retries on a signal that
// lives as long as they do: a wait that left its abort listener on it added
// one per retry, for as long as the server stayed away.

/** Waits `ms`, or less when `signal` aborts first; true when the whole wait passed. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
