// Publishers writing one monitor through every node, each keeping what was
// acknowledged (201 with its seq) and what had no reply (outcome unknown).
export interface PublishRecord {
  readonly publisher: number;
  readonly n: number;
  readonly node: number;
  readonly status: number;
  readonly seq: number | undefined;
  /** The Retry-After header of a 503. */
  readonly retryAfter?: string | null;
  /** Why there was no reply (ECONNREFUSED: the write was never sent). */
  readonly error?: string;
}

export interface PublishWorkload {
  readonly monitor: string;
  readonly token: string;
  readonly publishers: number;
  readonly bases: () => readonly string[];
  /** Checked before each round: false ends the run. */
  readonly running: () => boolean;
  readonly records: PublishRecord[];
  /** A publisher gives up on a publish after this long (default 20 s): its outcome is unknown. */
  readonly timeoutMs?: number;
}

export async function runPublishers(workload: PublishWorkload): Promise<PublishRecord[]> {
  const records = workload.records;
  await Promise.all(
    Array.from({ length: workload.publishers }, async (_, publisher) => {
      for (let n = 0; workload.running(); n++) {
        const bases = workload.bases();
        const node = (publisher + n) % bases.length;
        let status = 0;
        let seq: number | undefined;
        let retryAfter: string | null | undefined;
        let error: string | undefined;
        try {
          const response = await fetch(`${bases[node]}/monitors/${encodeURIComponent(workload.monitor)}/observations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${workload.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ type: 'test.load', subject: `p${publisher}`, data: { publisher, n } }),
            signal: AbortSignal.timeout(workload.timeoutMs ?? 20_000),
          });
          status = response.status;
          if (status === 503) retryAfter = response.headers.get('retry-after');
          const body = (await response.json().catch(() => ({}))) as { seq?: number };
          seq = body.seq;
        } catch (failure) {
          // No reply: unless the connection was refused, the write may or may not be stored.
          error = (failure as { cause?: { code?: string } }).cause?.code ?? (failure as Error).message;
        }
        records.push({ publisher, n, node, status, seq, ...(retryAfter !== undefined && { retryAfter }), ...(error !== undefined && { error }) });
        if (status !== 201) await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
  return records;
}
