// Wake latency: a pull waits (wait=10) at the next cursor; once it has had
// time to park, another connection publishes one observation; the figure is
// the time from sending the publish to the return of the waiting pull, and
// its yardstick the publish's own round trip.
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { client, json } from '../lib/http.ts';
import { nowMs, sleep } from '../lib/stats.ts';

interface Args {
  base: string;
  /** Where the pull waits, when not on the publishing server (another node of a cluster). */
  readerBase?: string;
  monitor: string;
  owner: string;
  subscription: string;
  token: string;
  cursor: number;
  samples: number;
}
interface Page {
  next: number;
  observations: unknown[];
}

const args = childArgs<Args>();
const puller = client(args.readerBase ?? args.base, 1);
const publisher = client(args.base, 1);
await Promise.all([puller('GET', '/discover'), publisher('GET', '/discover')]);
await readyThenGo();
const latencies: number[] = [];
/** The yardstick: the same publish's own round trip (sent → its 201). */
const publishLatencies: number[] = [];
let cursor = args.cursor;
for (let i = 0; i < args.samples; i++) {
  let sent = 0;
  const pull = json<Page>(puller, 'GET', `/subscriptions/${args.subscription}/pull?wait=10&limit=10&cursor=${cursor}`, undefined, args.token).then(
    (page) => ({ page, at: nowMs() }),
  );
  await sleep(15);
  sent = nowMs();
  const published = json(publisher, 'POST', `/monitors/${args.monitor}/observations`, { type: 'bench.wake', subject: 'w', data: { i } }, args.owner).then(() => nowMs());
  const { page, at } = await pull;
  const acknowledged = await published;
  if (page.observations.length > 0) {
    latencies.push(at - sent);
    publishLatencies.push(acknowledged - sent);
  }
  cursor = page.next;
}
finish({ latencies, publishLatencies });
