// The how-to guides, run as a reader runs them (test/support/doc-page.ts):
// each page's ```sh blocks in order, in a fresh folder; the pages check what
// they promise themselves, so a page that stops working fails here.
import { describe, it } from 'vitest';
import { expectPageRuns as runs } from '../support/doc-page.ts';
import { postgresFor } from '../support/postgres.ts';
import { proxiesFor } from '../support/requirements.ts';
import { scaled } from '../support/time-scale.ts';

const limit = scaled(180_000);


describe('how-to guides', { timeout: limit + 10_000 }, () => {
  it.each([
    ['alert on failed agent runs', 'how-to/alert-on-failed-runs.md'],
    ['cap spend and concurrency', 'how-to/cap-spend-and-concurrency.md'],
    ['agents in parallel on one repository', 'how-to/parallel-agents.md'],
    ['write a stand-in for an agent CLI', 'how-to/agent-cli-stand-in.md'],
    ['what to commit in .vigil/', 'how-to/what-to-commit.md'],
    ['benchmark your server', 'how-to/benchmark-your-server.md'],
  ])('%s', async (_what, page) => {
    await runs(page, limit);
  });
});

describe('the proxy how-to', { timeout: limit + 10_000 }, () => {
  it.skipIf(!proxiesFor('the proxy how-to'))('behind nginx and Caddy', async () => {
    await runs('how-to/behind-a-proxy.md', limit);
  });
});

describe('how-to guides that need PostgreSQL', { timeout: limit + 10_000 }, async () => {
  const missing = await postgresFor('the PostgreSQL how-to');
  it.skipIf(missing !== undefined)('several nodes on PostgreSQL', async () => {
    await runs('how-to/postgres-nodes.md', limit);
  });
});
