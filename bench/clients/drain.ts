// Drains a subscription: pull limit=1000, ack `next`, until the page is empty.
import { childArgs, finish, readyThenGo } from '../lib/child-side.ts';
import { client, json } from '../lib/http.ts';
import { nowMs } from '../lib/stats.ts';

interface Args {
  base: string;
  subscription: string;
  token: string;
}
interface Page {
  next: number;
  observations: unknown[];
}

const args = childArgs<Args>();
const request = client(args.base, 1);
await request('GET', '/discover');
await readyThenGo();
const start = nowMs();
let observations = 0;
let pages = 0;
for (;;) {
  const page = await json<Page>(request, 'GET', `/subscriptions/${args.subscription}/pull?limit=1000`, undefined, args.token);
  if (page.observations.length === 0) break;
  observations += page.observations.length;
  pages++;
  await json(request, 'POST', `/subscriptions/${args.subscription}/ack`, { cursor: page.next }, args.token);
}
finish({ observations, pages, elapsedMs: nowMs() - start });
