// The session a node writes its batches on: pg's pipeline mode, so that a
// batch's statements leave in one write and their answers come back
// together (two round trips per batch: the statements, then COMMIT or
// ROLLBACK), instead of one round trip per statement. One batch is in
// flight at a time (cluster-commit.ts), so the session is never shared.
// A session that failed is dropped; the next batch opens a new one.
import pg from 'pg';

export interface Statement {
  /** Named: parsed once per session, then only bound and run. */
  readonly name: string;
  readonly text: string;
  readonly values?: readonly unknown[];
}

export type Settled = { ok: true; rows: Array<Record<string, unknown>> } | { ok: false; error: unknown };

export class PgPipeline {
  private client: Promise<pg.Client> | undefined;
  private current: pg.Client | undefined;
  /** The session the batch in flight began its transaction on. */
  private transaction: pg.Client | undefined;
  private closed = false;

  /** `config`: the connection string, type parsers and session limits of the node's other sessions. */
  constructor(private readonly config: pg.ClientConfig) {}

  /** Sends a transaction's statements (from BEGIN on) at once and waits for all their answers, in order. */
  async begin(statements: readonly Statement[]): Promise<Settled[]> {
    let client = await this.open();
    // A transaction left open (never seen: its batch ends with COMMIT or ROLLBACK) must not take in the next batch.
    if (client.getTransactionStatus() !== 'I') {
      this.drop(client);
      client = await this.open();
    }
    this.transaction = client;
    return this.send(client, statements);
  }

  private async send(client: pg.Client, statements: readonly Statement[]): Promise<Settled[]> {
    // Corked: the statements' messages leave in one write.
    const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
    stream?.cork?.();
    let sent: Array<Promise<Settled>>;
    try {
      sent = statements.map((s) =>
        client.query({ name: s.name, text: s.text, values: s.values as unknown[] | undefined }).then(
          (r): Settled => ({ ok: true, rows: r.rows }),
          (error: unknown): Settled => ({ ok: false, error }),
        ),
      );
    } finally {
      stream?.uncork?.();
    }
    const settled = await Promise.all(sent);
    // PostgreSQL's own refusals leave the session usable; anything else (a lost connection, a read timeout) does not.
    if (settled.some((s) => !s.ok && !(s.error instanceof pg.DatabaseError))) this.drop(client);
    return settled;
  }

  /** Ends the transaction begun (COMMIT); rejects with its error. */
  async end(statement: Statement): Promise<void> {
    const client = this.transaction;
    if (!client || client !== this.current) throw new Error('the PostgreSQL session of this batch was lost');
    const [result] = await this.send(client, [statement]);
    if (!result!.ok) throw result!.error;
  }

  /** Ends the transaction a failed batch left open on the session (none: nothing is sent). */
  async rollback(statement: Statement): Promise<void> {
    const client = this.transaction;
    if (!client || client !== this.current || client.getTransactionStatus() === 'I') return;
    await this.end(statement).catch(() => this.drop(client));
  }

  private open(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the PostgreSQL store is closed'));
    if (this.client) return this.client;
    const client = new pg.Client({ ...this.config, pipeline: true });
    // An error the session reports between batches (the server ended it) drops it; a batch's own shows in its answers.
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    const opened = client.connect().then(
      () => client,
      (error: unknown) => {
        this.drop(client);
        throw error;
      },
    );
    this.client = opened;
    this.current = client;
    return opened;
  }

  /** Forgets a session that failed (a lost connection, a read timeout) and ends it. */
  private drop(client: pg.Client): void {
    if (this.current !== client) return;
    this.current = undefined;
    this.client = undefined;
    client.end().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.current;
    this.current = undefined;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
