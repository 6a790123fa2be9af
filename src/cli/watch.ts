// `vigil watch`: follows one subscription and prints one line per
// observation; acknowledges only after printing, and keeps going through
// server restarts by resuming from the committed cursor.
import type { CAC } from 'cac';
import { defaultBase, ServerError, serverClient, UnreachableError } from './server-client.ts';
import { stringFlag, UsageError, wholeNumberFlag } from './options.ts';

interface WatchFlags {
  base?: unknown;
  subscription?: unknown;
  token?: unknown;
  catchUp?: boolean;
  wait?: unknown;
  limit?: unknown;
  once?: boolean;
}

interface Observation {
  id: string;
  type: string;
  subject: string | null;
  tier: string;
  origin: string;
  actor: string;
  data: unknown;
}

/** The line §16 prescribes for one observation. */
export function watchLine(o: Observation): string {
  const data = JSON.stringify(o.data ?? null);
  const cut = data.length > 400 ? `${data.slice(0, 399)}…` : data;
  return `${o.id} ${o.type} ${o.subject ?? '-'} tier=${o.tier} origin=${o.origin} actor=${o.actor} ${cut}`;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

export function registerWatchCommand(cli: CAC): void {
  cli
    .command('watch', 'Follow one subscription; print one line per observation')
    .option('--base <url>', 'Server to use', { default: process.env.VIGIL_BASE ?? defaultBase, type: [String] })
    .option('--subscription <id>', 'Subscription to follow', { type: [String] })
    .option('--token <token>', 'Subscription token (or VIGIL_TOKEN)', { type: [String] })
    .option('--catch-up', 'Print the backlog first (otherwise start at the head)')
    .option('--wait <seconds>', 'Pull wait', { default: 25 })
    .option('--limit <n>', 'Batch size', { default: 50 })
    .option('--once', 'Stop after one batch')
    .example('vigil watch --subscription sub-1a2b3c --token vgs_... --catch-up')
    .action(async (flags: WatchFlags) => {
      const subscription = stringFlag('--subscription', flags.subscription);
      const token = stringFlag('--token', flags.token) ?? process.env.VIGIL_TOKEN;
      if (!subscription) throw new UsageError('--subscription <id> is required.');
      if (!token) throw new UsageError('--token <token> is required (or set VIGIL_TOKEN).');
      const wait = wholeNumberFlag('--wait', flags.wait, 0, 50);
      const limit = wholeNumberFlag('--limit', flags.limit, 1, 1000);
      const client = serverClient(stringFlag('--base', flags.base) ?? defaultBase);
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      const path = `/subscriptions/${encodeURIComponent(subscription)}`;
      let skippedBacklog = flags.catchUp === true;
      // What this watcher printed: after a restart the server may redeliver what was printed but not yet acknowledged.
      let printedUpTo = 0;
      let reportedDown = false;
      let retryMs = 250;
      while (!stop.signal.aborted) {
        try {
          if (!skippedBacklog) {
            const probe = await client.request('GET', `${path}/pull?limit=1`, { token, signal: stop.signal });
            await client.request('POST', `${path}/seek`, {
              token,
              body: { cursor: probe.head + 1, reason: 'vigil watch started at the head (no --catch-up)' },
            });
            skippedBacklog = true;
          }
          const page = await client.request('GET', `${path}/pull?wait=${flags.once ? 0 : wait}&limit=${limit}`, {
            token,
            signal: stop.signal,
          });
          if (reportedDown) process.stderr.write('vigil watch: reconnected\n');
          reportedDown = false;
          retryMs = 250;
          for (const observation of page.observations as Observation[]) {
            const seq = Number(observation.id);
            if (seq <= printedUpTo) continue;
            process.stdout.write(`${watchLine(observation)}\n`);
            printedUpTo = seq;
          }
          if (page.next > page.cursor) {
            try {
              await client.request('POST', `${path}/ack`, { token, body: { cursor: page.next } });
            } catch (error) {
              // Another consumer of the same subscription acknowledged further: carry on from there.
              if (!(error instanceof ServerError && error.body.code === 'CURSOR_BACKWARDS')) throw error;
            }
          }
          if (flags.once) return;
        } catch (error) {
          if (stop.signal.aborted) break;
          if (error instanceof UnreachableError || (error instanceof ServerError && error.status >= 500)) {
            if (!reportedDown) process.stderr.write(`vigil watch: ${error.message}; retrying\n`);
            reportedDown = true;
            await sleep(retryMs, stop.signal);
            retryMs = Math.min(retryMs * 2, 5000);
            continue;
          }
          process.stderr.write(`vigil watch: ${(error as Error).message}\n`);
          process.exit(1);
        }
      }
    });
}
