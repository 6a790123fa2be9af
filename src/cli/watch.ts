// `vigil watch`: follows one subscription and prints one line per
// observation; acknowledges only what was written, and keeps going through
// server restarts by resuming from where it read.
import type { CAC } from 'cac';
import { baseHelp, resolveBase } from './base-flag.ts';
import { type Page, ProtocolClient } from '../server-client/protocol-client.ts';
import { ServerError, UnreachableError } from '../server-client/server-client.ts';
import { abortOnStopSignals, ExitCode, exitCodeOf, signalExit } from '../errors/exit-codes.ts';
import { defineCommand, exitWith, fail } from './command.ts';
import { stringFlag, UsageError, wholeNumberFlag } from './options.ts';
import { isBookkeeping, type WatchedObservation, watchLine } from './watch-line.ts';
import { sleep } from '../timing/sleep.ts';

export { watchLine } from './watch-line.ts';

interface WatchFlags {
  base?: unknown;
  subscription?: unknown;
  token?: unknown;
  catchUp?: boolean;
  wait?: unknown;
  limit?: unknown;
  once?: boolean;
  retryFor?: unknown;
  json?: boolean;
  all?: boolean;
}

/** Writes to stdout; false once the reader has gone (EPIPE, as with `watch | head`). */
function stdoutWriter(): (text: string) => Promise<boolean> {
  let closed = false;
  process.stdout.on('error', () => {
    closed = true;
  });
  return (text) =>
    closed
      ? Promise.resolve(false)
      : new Promise((resolve) => {
          process.stdout.write(text, (error) => {
            if (error) closed = true;
            resolve(!error);
          });
        });
}

export function registerWatchCommand(cli: CAC): void {
  defineCommand(cli, 'watch', "Follow one subscription; print one line per observation (the server's bookkeeping hidden unless --all)")
    .option('--base <urls>', `${baseHelp}; several nodes of one cluster comma-separated: watch moves to the next when one is unreachable`, { type: [String] })
    .option('--subscription <id>', 'Subscription to follow', { type: [String] })
    .option('--token <token>', 'Subscription token (or VIGIL_TOKEN)', { type: [String] })
    .option('--catch-up', 'Print the backlog first, from the stored cursor (otherwise print from the head on, and leave a backlog unacknowledged)')
    .option('--wait <seconds>', 'Pull wait (also for --once)', { default: 25 })
    .option('--limit <n>', 'Batch size', { default: 50 })
    .option('--once', 'Stop after one batch')
    .option('--json', 'Print each observation whole, as the server serves it, one JSON object per line')
    .option('--all', "Also print the server's own bookkeeping (ai.vigil.monitor.subscribed, .lease, .rejected, …), hidden by default")
    .option('--retry-for <seconds>', 'Give up (exit 3) when the server stays unreachable this long (default: retry for ever)', { type: [String] })
    .example('vigil watch --subscription sub-1a2b3c --token vgs_... --catch-up')
    .action(async (flags: WatchFlags) => {
      const subscription = stringFlag('--subscription', flags.subscription);
      const token = stringFlag('--token', flags.token) ?? process.env.VIGIL_TOKEN;
      if (!subscription) throw new UsageError('--subscription <id> is required.');
      if (!token) throw new UsageError('--token <token> is required (or set VIGIL_TOKEN).');
      const wait = wholeNumberFlag('--wait', flags.wait, 0, 50);
      const limit = wholeNumberFlag('--limit', flags.limit, 1, 1000);
      const retryText = stringFlag('--retry-for', flags.retryFor);
      const retryForMs = retryText === undefined ? undefined : wholeNumberFlag('--retry-for', retryText, 0, 31_536_000) * 1000;
      const bases = (await resolveBase(flags.base)).split(',').map((b) => b.trim()).filter(Boolean);
      if (bases.length === 0) throw new UsageError('--base takes a server URL, or several comma-separated.');
      const clients = bases.map((b) => new ProtocolClient(b));
      let current = 0;
      let client = clients[current]!;
      const moveToNextNode = () => {
        current = (current + 1) % clients.length;
        client = clients[current]!;
      };
      /** Nodes tried since the last answer: only when every one failed does watch wait before trying again. */
      let failedInARow = 0;
      const write = stdoutWriter();
      const stop = new AbortController();
      // Ctrl-C or SIGTERM ends the follow as every command ends on them (130, 143), once its acknowledgement is sent.
      abortOnStopSignals(stop);
      const sub = { id: subscription, token };
      const ack = async (cursor: number) => {
        try {
          await client.ack(sub, cursor);
        } catch (error) {
          // Another consumer of the same subscription acknowledged further: carry on from there.
          if (!(error instanceof ServerError && error.body.code === 'CURSOR_BACKWARDS')) throw error;
        }
      };
      // Where this watcher reads next. It never moves the stored cursor past
      // what it printed: without --catch-up a backlog found at start stays unacknowledged.
      let cursor: number | undefined;
      let acknowledged = 0;
      let mayAck = true;
      let downSince: number | undefined;
      let retryMs = 250;
      while (!stop.signal.aborted) {
        try {
          if (cursor === undefined) {
            const probe: Page<WatchedObservation> = await client.pull(sub, { limit: 1, signal: stop.signal });
            acknowledged = probe.cursor;
            cursor = flags.catchUp ? probe.cursor : probe.head + 1;
            if (!flags.catchUp && probe.lag > 0) {
              mayAck = false;
              process.stderr.write(
                `vigil watch: printing from seq ${probe.head + 1}; ${probe.lag} earlier observation(s) since the stored cursor stay unacknowledged (--catch-up prints them)\n`,
              );
            }
          }
          const page: Page<WatchedObservation> = await client.pull(sub, { cursor, wait, limit, signal: stop.signal });
          if (downSince !== undefined) process.stderr.write(`vigil watch: reconnected${clients.length > 1 ? ` to ${client.root}` : ''}\n`);
          downSince = undefined;
          failedInARow = 0;
          retryMs = 250;
          let written = cursor;
          for (const observation of page.observations) {
            const shown = flags.all || !isBookkeeping(observation);
            const line = flags.json ? JSON.stringify(observation) : watchLine(observation, page.monitor);
            if (shown && !(await write(`${line}\n`))) {
              // The reader went away: acknowledge only the lines it got, then leave quietly.
              if (mayAck && written > acknowledged) await ack(written).catch(() => undefined);
              exitWith(ExitCode.ok);
            }
            written = Number(observation.id) + 1;
          }
          cursor = Math.max(cursor, page.next);
          if (mayAck && cursor > acknowledged) {
            await ack(cursor);
            acknowledged = cursor;
          }
          if (flags.once) return;
        } catch (error) {
          if (stop.signal.aborted) break;
          if (error instanceof UnreachableError || (error instanceof ServerError && error.status >= 500)) {
            const now = Date.now();
            if (clients.length > 1 && ++failedInARow < clients.length) {
              // Another node of the cluster serves the same subscription: move there at once.
              moveToNextNode();
              downSince ??= now;
              process.stderr.write(`vigil watch: ${error.message}; switching to ${client.root}\n`);
              continue;
            }
            failedInARow = 0;
            if (clients.length > 1) moveToNextNode();
            if (downSince === undefined) {
              downSince = now;
              process.stderr.write(`vigil watch: ${error.message}; retrying${retryForMs === undefined ? '' : ` for ${retryForMs / 1000} s`}\n`);
            }
            if (retryForMs !== undefined && now - downSince >= retryForMs) {
              process.stderr.write(`vigil watch: gave up after ${retryForMs / 1000} s: ${error.message}\n`);
              process.exit(exitCodeOf(error));
            }
            await sleep(Math.min(retryMs, retryForMs === undefined ? retryMs : Math.max(0, downSince + retryForMs - now)), stop.signal);
            retryMs = Math.min(retryMs * 2, 5000);
            continue;
          }
          fail(error, 'vigil watch');
        }
      }
      if (stop.signal.aborted) exitWith(signalExit(String(stop.signal.reason)));
    });
}
