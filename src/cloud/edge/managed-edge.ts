// The managed edge: each deployed worker runs in workerd through miniflare
// and answers on the edge's own port (--edge-port) at <name>.<edge domain>
// by Host header, an origin of its own (edge-door.ts). Scripts and secrets (as worker bindings) are rows in the server's
// store, or in a cluster's PostgreSQL, so workers come back after a restart and
// every node serves every worker; a worker's runtime starts on its first
// request and is replaced when its script or secrets change (on a cluster:
// when the row's version differs from the running one's, at the next use). A
// cron run happens on one node: the one that claims its due time.
import { randomUUID } from 'node:crypto';
import { invalid, notFound, ProtocolError } from '../../protocol/errors.ts';
import type { CloudRows } from '../cloud-rows.ts';
import type { ApiKeyTable, WorkerTable } from '../cloud-store.ts';
import { checkCrons, CronJobs } from './cron-jobs.ts';
import { defaultEdgeRequestCaps, EdgeAdmission, type EdgeRequestCaps } from './edge-admission.ts';
import { defaultWorkerLimits, WorkerLimitError, type WorkerLimits, WorkerRuntimes } from './worker-runtimes.ts';

export interface WorkerInfo {
  name: string;
  id: string;
  created_on: string;
  modified_on: string;
}

/** Each worker is a workerd process while it runs: a key may hold this many. */
export const maxWorkersPerKey = 50;

export const workerName = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const secretName = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function checkWorkerName(name: unknown): string {
  if (typeof name !== 'string' || !workerName.test(name)) {
    throw invalid(`"name" must be 1-63 lower-case letters, digits or "-" (a DNS label); got ${JSON.stringify(name ?? null)}.`, { field: 'name' });
  }
  return name;
}

function checkSecretName(key: unknown): string {
  if (typeof key !== 'string' || !secretName.test(key)) {
    throw invalid(`"key" must be a binding name (letters, digits and "_", not starting with a digit); got ${JSON.stringify(key ?? null)}.`, { field: 'key' });
  }
  return key;
}

const infoOf = (row: WorkerTable): WorkerInfo => ({ name: row.name, id: row.id, created_on: row.created_on, modified_on: row.modified_on });

/** A cluster node reads every worker's crons this often, to run those deployed through other nodes. */
const cronReloadMs = 2_000;

const taken = (name: string) => new ProtocolError('DUPLICATE', `The worker name "${name}" is taken on this edge; choose another.`, { field: 'name' });

export class ManagedEdge {
  readonly runtimes: WorkerRuntimes;
  /** Requests in progress, capped per worker and per client (edge-door.ts). */
  readonly admission: EdgeAdmission;
  private readonly crons: CronJobs;
  private readonly cronReload: NodeJS.Timeout | undefined;

  private listeningPort = 0;

  constructor(
    /** Shared by other nodes on a cluster (`store.shared`): each use of a worker then checks its row's version. */
    private readonly store: CloudRows,
    /** Workers answer at <name>.<edgeDomain>; `localhost` by default, which browsers resolve to this machine. */
    readonly edgeDomain: string,
    private readonly log: (line: string) => void = () => {},
    readonly limits: WorkerLimits = defaultWorkerLimits,
    requestCaps: EdgeRequestCaps = defaultEdgeRequestCaps,
  ) {
    const shared = store.shared;
    const load = async (name: string) => {
      const row = await this.store.worker(name);
      return row && { script: row.script, bindings: JSON.parse(row.secrets) as Record<string, string>, version: row.version, keyId: row.key_id };
    };
    this.admission = new EdgeAdmission(requestCaps);
    this.runtimes = new WorkerRuntimes(load, limits, shared ? (name) => this.store.workerVersion(name) : undefined, log);
    this.crons = new CronJobs((name, cron, dueMs) => void this.runCron(name, cron, dueMs));
    void this.reloadCrons();
    if (shared) {
      this.cronReload = setInterval(() => void this.reloadCrons(), cronReloadMs);
      this.cronReload.unref();
    }
  }

  private async reloadCrons(): Promise<void> {
    try {
      this.crons.sync(new Map((await this.store.workerCrons()).map((row) => [row.name, row.crons])));
    } catch (error) {
      this.log(`edge workers: cannot read the workers' crons: ${(error as Error).message}`);
    }
  }

  private async runCron(name: string, cron: string, dueMs: number): Promise<void> {
    try {
      if (!(await this.store.claimCronRun(name, cron, dueMs))) return;
      await this.runtimes.scheduled(name, cron, dueMs);
    } catch (error) {
      this.log(`edge worker ${name}: scheduled run (${cron}) failed: ${(error as Error).message}`);
    }
  }

  /** The edge door's port once it listens (edge-door.ts); 0 before. */
  get port(): number {
    return this.listeningPort;
  }

  /** The edge door reports the port it listens on, which workers' URLs name. */
  listeningOn(port: number): void {
    this.listeningPort = port;
  }

  /** Where a deployed worker answers. */
  urlOf(name: string): string {
    return `http://${name}.${this.edgeDomain}${this.port === 80 ? '' : `:${this.port}`}/`;
  }

  async deploy(
    key: ApiKeyTable,
    name: string,
    input: { script?: unknown; crons?: unknown },
  ): Promise<{ name: string; url: string; deployed: boolean }> {
    checkWorkerName(name);
    const { script } = input;
    const crons = checkCrons(input.crons);
    if (typeof script !== 'string' || script.trim().length === 0) throw invalid('"script" must be the bundled worker module as text.', { field: 'script' });
    const existing = await this.owned(key, name, true);
    if (!existing && (await this.store.workersOf(key.id)).length >= maxWorkersPerKey) {
      throw invalid(`This API key already has ${maxWorkersPerKey} workers, the most one key may hold; delete one first.`, { field: 'name' });
    }
    const bindings = existing ? (JSON.parse(existing.secrets) as Record<string, string>) : {};
    const version = randomUUID();
    // Started before it is stored: a script workerd refuses is never deployed.
    const started = await this.runtimes.prepare(name, { script, bindings, version, keyId: key.id }).catch((error: unknown) => {
      if (error instanceof WorkerLimitError && error.status === 503) throw new ProtocolError('UNAVAILABLE', error.message);
      throw invalid(`The worker does not start: ${(error as Error).message}`, { field: 'script' });
    });
    const now = new Date().toISOString();
    const stored = await this.store
      .putWorker({
        name,
        id: existing?.id ?? randomUUID().replaceAll('-', ''),
        key_id: key.id,
        script,
        secrets: existing?.secrets ?? '{}',
        crons: JSON.stringify(crons),
        created_on: existing?.created_on ?? now,
        modified_on: now,
        version,
      })
      .then((done) => this.store.settled().then(() => done))
      .catch(async (error: unknown) => {
        await started.discard();
        throw error;
      });
    if (!stored) {
      await started.discard();
      throw taken(name);
    }
    await started.install();
    this.crons.set(name, crons);
    return { name, url: this.urlOf(name), deployed: true };
  }

  async list(key: ApiKeyTable): Promise<WorkerInfo[]> {
    return (await this.store.workersOf(key.id)).map(infoOf);
  }

  async status(key: ApiKeyTable, name: string): Promise<WorkerInfo> {
    return infoOf(await this.owned(key, name));
  }

  async delete(key: ApiKeyTable, name: string): Promise<{ deleted: boolean }> {
    await this.owned(key, name);
    await this.remove(name);
    return { deleted: true };
  }

  /** Every key's workers, with their key and whether their runtime runs on this node (the admin's view). */
  async listAll(): Promise<Array<WorkerInfo & { key_id: string; running: boolean }>> {
    const running = new Set(this.runtimes.runningNames());
    return (await this.store.allWorkers()).map((row) => ({ ...infoOf(row), key_id: row.key_id, running: running.has(row.name) }));
  }

  /** Deletes any key's worker (the admin). */
  async deleteAny(name: string): Promise<{ deleted: boolean }> {
    if (!(await this.store.worker(name))) throw notFound(`No worker "${name}" on this edge.`);
    await this.remove(name);
    return { deleted: true };
  }

  /** Deletes every worker of a key (revoked): its rows, crons and runtimes. Returns their names. */
  async removeAllOf(keyId: string): Promise<string[]> {
    const names = (await this.store.workersOf(keyId)).map((row) => row.name);
    for (const name of names) await this.remove(name);
    return names;
  }

  /** The row goes first (a cluster's other nodes stop their runtime at its next use, and drop its crons within seconds). */
  private async remove(name: string): Promise<void> {
    await this.store.deleteWorker(name);
    await this.store.settled();
    this.crons.stop(name);
    await this.runtimes.stop(name);
  }

  async secretNames(key: ApiKeyTable, name: string): Promise<string[]> {
    return Object.keys(JSON.parse((await this.owned(key, name)).secrets)).sort();
  }

  async setSecret(key: ApiKeyTable, name: string, secret: unknown, value: unknown): Promise<void> {
    const row = await this.owned(key, name);
    checkSecretName(secret);
    if (typeof value !== 'string' || value.length > 5120) throw invalid('"value" must be text of at most 5120 characters.', { field: 'value' });
    await this.updateSecrets(row, { ...JSON.parse(row.secrets), [secret as string]: value });
  }

  async deleteSecret(key: ApiKeyTable, name: string, secret: string): Promise<void> {
    const row = await this.owned(key, name);
    const secrets = JSON.parse(row.secrets) as Record<string, string>;
    if (!(secret in secrets)) throw notFound(`Worker "${name}" has no secret "${secret}".`);
    delete secrets[secret];
    await this.updateSecrets(row, secrets);
  }

  /** The worker a Host header names (<name>.<edge domain>[:port]), or undefined. */
  workerOfHost(host: string | undefined): string | undefined {
    if (!host) return undefined;
    const bare = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${this.edgeDomain}`;
    if (!bare.endsWith(suffix)) return undefined;
    const name = bare.slice(0, -suffix.length);
    return workerName.test(name) ? name : undefined;
  }

  /** Runs the worker's scheduled handler now (as `wrangler dev --test-scheduled` does). */
  async runScheduled(key: ApiKeyTable, name: string, cron: unknown): Promise<{ outcome: string }> {
    const row = await this.owned(key, name);
    const pattern = cron === undefined ? ((JSON.parse(row.crons) as string[])[0] ?? '* * * * *') : checkCrons([cron])[0]!;
    try {
      return (await this.runtimes.scheduled(name, pattern)) ?? { outcome: 'not deployed' };
    } catch (error) {
      if (error instanceof WorkerLimitError) throw new ProtocolError('UNAVAILABLE', error.message);
      throw error;
    }
  }

  close(): Promise<void> {
    clearInterval(this.cronReload);
    this.crons.stopAll();
    return this.runtimes.closeAll();
  }

  private async updateSecrets(row: WorkerTable, secrets: Record<string, string>): Promise<void> {
    const next = { ...row, secrets: JSON.stringify(secrets), modified_on: new Date().toISOString(), version: randomUUID() };
    if (!(await this.store.putWorker(next))) throw taken(row.name);
    await this.store.settled();
    // Its runtime is stopped: the next use starts one with the new bindings (an idle worker is not started for it).
    await this.runtimes.stop(row.name);
  }

  /** Another key's worker is "not found" (or, when deploying, a name already taken). */
  private owned(key: ApiKeyTable, name: string, forDeploy: true): Promise<WorkerTable | undefined>;
  private owned(key: ApiKeyTable, name: string): Promise<WorkerTable>;
  private async owned(key: ApiKeyTable, name: string, forDeploy = false): Promise<WorkerTable | undefined> {
    const row = await this.store.worker(name);
    if (row && row.key_id !== key.id) {
      if (forDeploy) throw taken(name);
      throw notFound(`No worker "${name}" for this API key.`);
    }
    if (!row && !forDeploy) throw notFound(`No worker "${name}" for this API key.`);
    return row;
  }
}
