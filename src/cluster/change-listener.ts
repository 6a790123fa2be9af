// LISTEN on the changes channel: every committed batch of any node announces
// (monitor, rev) pairs, and this node catches up on the monitors it holds.
// The same session hears the turns channel (turns.ts).
// A lost connection is reopened; what was missed meanwhile is caught up on.
import type pg from 'pg';
import type { PgConnection } from '../store/postgres/pg-connection.ts';
import { changesChannel } from '../store/postgres/pg-store.ts';
import { parseTurnMessage, type TurnMessage, turnsChannel } from './turns.ts';

const beatMs = 5000;

export class ChangeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(
    private readonly connection: PgConnection,
    private readonly changed: (mkey: number, rev: number, timers: boolean) => void,
    private readonly reconnected: () => Promise<void>,
    private readonly turn: (message: TurnMessage) => void,
    private readonly log: (line: string) => void,
  ) {}

  static async start(
    connection: PgConnection,
    hooks: {
      changed: (mkey: number, rev: number, timers: boolean) => void;
      reconnected: () => Promise<void>;
      /** Another node asks for a turn on a monitor, or is done with it (turns.ts). */
      turn: (message: TurnMessage) => void;
    },
    log: (line: string) => void,
  ): Promise<ChangeListener> {
    const listener = new ChangeListener(connection, hooks.changed, hooks.reconnected, hooks.turn, log);
    await listener.connect();
    return listener;
  }

  private async connect(): Promise<void> {
    const client = await this.connection.session();
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    client.on('notification', (message) => {
      if (message.channel === turnsChannel) {
        const turn = parseTurnMessage(message.payload);
        if (turn) this.turn(turn);
        return;
      }
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
    try {
      await client.query(`listen ${changesChannel}; listen ${turnsChannel}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    this.client = client;
    this.heartbeat ??= setInterval(() => void this.beat(), beatMs);
    this.heartbeat.unref();
  }

  /** A session that PostgreSQL ended says so; one cut off silently is noticed by a query that gets no answer. */
  private async beat(): Promise<void> {
    const client = this.client;
    if (!client || this.closed) return;
    try {
      await client.query({ text: 'select 1', query_timeout: beatMs } as pg.QueryConfig);
    } catch {
      if (this.client !== client) return;
      this.client = undefined;
      client.end().catch(() => {});
      this.log('vigil: the PostgreSQL notification connection stopped answering; reconnecting');
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.connect().then(
        () => this.catchUp(),
        () => this.scheduleReconnect(),
      );
    }, 500);
  }

  /** Notifications sent while the connection was down are lost: catch up on every monitor held here. */
  private catchUp(): void {
    if (this.closed) return;
    this.reconnected().then(
      () => this.log('vigil: the PostgreSQL notification connection is back'),
      (error) => {
        this.log(`vigil: cannot catch up after reconnecting to PostgreSQL (${(error as Error).message}); trying again in 1 s`);
        this.retry = setTimeout(() => this.catchUp(), 1000);
      },
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.heartbeat);
    await this.client?.end().catch(() => {});
  }
}
