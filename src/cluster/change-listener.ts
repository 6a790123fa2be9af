// LISTEN on the changes channel: every committed batch of any node announces
// (monitor, rev) pairs, and this node catches up on the monitors it holds.
// A lost connection is reopened; what was missed meanwhile is caught up on.
import type pg from 'pg';
import type { PgConnection } from '../store/postgres/pg-connection.ts';
import { changesChannel } from '../store/postgres/pg-store.ts';

export class ChangeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  private constructor(
    private readonly connection: PgConnection,
    private readonly changed: (mkey: number, rev: number, timers: boolean) => void,
    private readonly reconnected: () => Promise<void>,
    private readonly log: (line: string) => void,
  ) {}

  static async start(
    connection: PgConnection,
    changed: (mkey: number, rev: number, timers: boolean) => void,
    reconnected: () => Promise<void>,
    log: (line: string) => void,
  ): Promise<ChangeListener> {
    const listener = new ChangeListener(connection, changed, reconnected, log);
    await listener.connect();
    return listener;
  }

  private async connect(): Promise<void> {
    const client = await this.connection.session();
    client.on('notification', (message) => {
      if (message.channel !== changesChannel || !message.payload) return;
      for (const pair of message.payload.split(',')) {
        const [mkey, rev, timers] = pair.split(':').map(Number);
        if (Number.isSafeInteger(mkey) && Number.isSafeInteger(rev)) this.changed(mkey!, rev!, timers === 1);
      }
    });
    const lost = () => {
      if (this.closed || this.client !== client) return;
      this.client = undefined;
      this.log('vigil: lost the PostgreSQL notification connection; reconnecting');
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.query(`listen ${changesChannel}`);
    this.client = client;
  }

  private scheduleReconnect(): void {
    this.retry = setTimeout(() => {
      this.connect()
        .then(() => this.reconnected())
        .catch(() => {
          if (!this.closed) this.scheduleReconnect();
        });
    }, 500);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => {});
  }
}
