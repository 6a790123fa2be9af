// A signal that follows others for one piece of work (a request, a poll), and
// an optional time limit. Node 20's AbortSignal.any keeps every signal it
// composes alive for as long as a source lives: composed per MCP request from
// the server's shutdown signal, or per poll from a live source's, that was
// about 1.2 KB a request held until the server stopped (measured: 620 MB after
// 500,000). This one takes its listeners off the sources when the work is done.

export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Takes its listeners off the sources and clears its timer: call it when the work is done, however it ended (the timer holds the process until then). */
  dispose(): void;
}

/** Aborts with the reason of the first source that aborts, or with a TimeoutError after `timeoutMs`. */
export function linkedSignal(sources: readonly AbortSignal[], timeoutMs?: number): LinkedSignal {
  const controller = new AbortController();
  const listening: Array<[AbortSignal, () => void]> = [];
  let timer: NodeJS.Timeout | undefined;
  const dispose = (): void => {
    for (const [source, listener] of listening) source.removeEventListener('abort', listener);
    listening.length = 0;
    clearTimeout(timer);
  };
  const abort = (reason: unknown): void => {
    dispose();
    controller.abort(reason);
  };
  for (const source of sources) {
    if (source.aborted) {
      abort(source.reason);
      return { signal: controller.signal, dispose };
    }
    const listener = (): void => abort(source.reason);
    source.addEventListener('abort', listener, { once: true });
    listening.push([source, listener]);
  }
  if (timeoutMs !== undefined) {
    // Kept ref'd, so that the work holds the process until it ends or times out: a fetch whose server
    // was killed under it can be left holding no handle (undici, Node 20), and a run waiting on it
    // exited at once with 13, "unsettled top-level await", having printed nothing.
    timer = setTimeout(() => abort(new DOMException(`no answer within ${timeoutMs / 1000} s`, 'TimeoutError')), timeoutMs);
  }
  return { signal: controller.signal, dispose };
}
