// `http`: polls a URL and writes when its status, its body's hash or its
// reachability changes; latency goes in the data. Unreachable is written
// once, then the actor backs off and tries again. The body is hashed as it
// arrives, up to 8 MB (the rest is not read).
import { createHash } from 'node:crypto';
import { readBounded } from '../../net/read-bounded.ts';
import { redactCredentials } from '../../net/redact.ts';
import type { SourceRun } from '../run.ts';
import { linkedSignal } from '../../timing/linked-signal.ts';

interface HttpCursor {
  reachable: boolean;
  status: number | null;
  hash: string | null;
}

const maxBodyBytes = 8 << 20;

export function runHttp(run: SourceRun): void {
  const { url, method, interval_s: interval, expect_status: expect } = run.settings<{
    url: string;
    method: string;
    interval_s: number;
    expect_status?: number;
  }>();
  // Observations are read by every subscriber: the URL's credentials stay out of them.
  const shown = redactCredentials(url);
  run.every(interval * 1000, async () => {
    const started = performance.now();
    let next: HttpCursor;
    let error: string | null = null;
    const linked = linkedSignal([run.signal], Math.min(30, interval) * 1000);
    try {
      const response = await run.outbound.fetch(url, { method, redirect: 'follow', signal: linked.signal });
      const hash = createHash('sha256');
      await readBounded(response, maxBodyBytes, (chunk) => hash.update(chunk));
      next = { reachable: true, status: response.status, hash: hash.digest('hex') };
    } catch (thrown) {
      if (run.signal.aborted) return;
      error = (thrown as Error).cause ? String(((thrown as Error).cause as Error).message ?? (thrown as Error).cause) : (thrown as Error).message;
      next = { reachable: false, status: null, hash: null };
    } finally {
      linked.dispose();
    }
    const latency = Math.round(performance.now() - started);
    const previous = run.cursor<HttpCursor>();
    const changed =
      !previous || previous.reachable !== next.reachable || previous.status !== next.status || previous.hash !== next.hash;
    if (changed) {
      run.emit({
        subject: shown,
        data: {
          url: shown,
          reachable: next.reachable,
          status: next.status,
          body_sha256: next.hash,
          latency_ms: latency,
          ...(expect !== undefined ? { expected: next.status === expect } : {}),
          ...(error ? { error: redactCredentials(error) } : {}),
          ...(previous ? { previous: { reachable: previous.reachable, status: previous.status } } : {}),
        },
        cursor: next,
        contact: next.reachable,
      });
    }
    if (!next.reachable) throw new Error(`${url} is unreachable: ${error}`);
    if (!changed) run.contact();
  });
}
