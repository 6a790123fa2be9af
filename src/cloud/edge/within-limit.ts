// A time limit on work that cannot itself be cancelled (a worker's request,
// its start): the caller stops waiting, and `expire` stops what it can.
/**
 * `work`'s outcome, or past `limitMs` the error `expire` returns (it also stops
 * what it can). The abandoned work's own later failure is of no interest.
 */
export async function withinLimit<T>(work: Promise<T>, limitMs: number, expire: () => Error): Promise<T> {
  work.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expire()), limitMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
