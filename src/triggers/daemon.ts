// `vigil daemon`: one per project. Runs every enabled temporal and sentinel
// recipe of the project and user folders, reloads within 2 s when recipe
// files change, keeps its state in .vigil/vigil.db and, after a kill -9,
// marks what was running as interrupted (its processes died with it) and
// carries on from the stored schedule and subscription cursors. It also runs
// the project's queued dispatch jobs.
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { discoverRecipes } from '../recipes/loading/discovery.ts';
import { toolActor } from '../protocol/client-actor.ts';
import { ServerPublisher } from '../recipes/publish/server-publisher.ts';
import { reapInterruptedRuns } from '../recipes/records/reap-interrupted.ts';
import { type Clock, systemClock } from './clock.ts';
import { acquireDaemonLock } from './daemon-lock.ts';
import { type DispatchRunner, startDispatchRunner } from './dispatch-runner.ts';
import type { Publish } from './firing.ts';
import { watchRecipes, type RecipeWatch } from './recipe-watch.ts';
import { SentinelSet } from './sentinel/sentinel-set.ts';
import { TemporalScheduler } from './temporal/temporal-scheduler.ts';
import { TriggerStore } from './trigger-store.ts';

export interface DaemonOptions {
  projectRoot: string;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** How often enable/disable written by other processes are read (ms). */
  pollMs?: number;
  /** Publish firings and reactions to the server of vigil.yml (default true). */
  publish?: boolean;
}

export class Daemon {
  private watch: RecipeWatch | null = null;
  private poll: NodeJS.Timeout | undefined;
  private publisher: ServerPublisher | null = null;
  private dispatch: DispatchRunner | null = null;

  private constructor(
    readonly projectRoot: string,
    readonly store: TriggerStore,
    private readonly lock: { release(): void },
    readonly temporal: TemporalScheduler,
    readonly sentinels: SentinelSet,
    private readonly log: (line: string) => void,
  ) {}

  static async start(options: DaemonOptions): Promise<Daemon> {
    const clock = options.clock ?? systemClock;
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const env = options.env ?? process.env;
    const lock = acquireDaemonLock(options.projectRoot, new Date(clock.now()));
    const store = TriggerStore.open(options.projectRoot);
    for (const f of store.runningFirings()) {
      store.endFiring(f.run_id, 'interrupted', clock.now(), 'the daemon running it died');
      log(`${f.trigger}: run ${f.run_id} was interrupted by the death of the previous daemon`);
    }
    reapInterruptedRuns(options.projectRoot);

    let publisher: ServerPublisher | null = null;
    const config = loadWorkspaceConfig(options.projectRoot);
    // A daemon runs for days: a server away at its start is waited for, as one away later is.
    if (config.server && options.publish !== false) publisher = await ServerPublisher.connect(config.server, options.projectRoot, log, toolActor('vigil-daemon'), { keepTrying: true, keepUnpublished: true });
    const publish: Publish | undefined = publisher ? (type, subject, data, actor) => publisher.publish(type, subject, data, actor) : undefined;
    const ctx = { projectRoot: options.projectRoot, store, clock, env, log, ...(publish ? { publish } : {}) };

    const daemon = new Daemon(options.projectRoot, store, lock, new TemporalScheduler(ctx), new SentinelSet(ctx, config.server), log);
    daemon.publisher = publisher;
    if (publisher?.monitorId) log(`publishing firings and reactions to monitor ${publisher.monitorId} on ${config.server!.base}`);
    daemon.reload('start', true);
    daemon.watch = watchRecipes(options.projectRoot, (why) => daemon.reload(why, false));
    await daemon.watch.ready;
    daemon.poll = setInterval(() => daemon.temporal.refreshEnabled(), options.pollMs ?? 500);
    daemon.dispatch = startDispatchRunner(options.projectRoot, env, log);
    return daemon;
  }

  reload(why: string, starting: boolean): void {
    const { recipes, broken } = discoverRecipes(this.projectRoot);
    for (const b of broken) this.log(`invalid recipe ${b.file} (ignored until fixed):\n${b.problems.map((p) => `  - ${p}`).join('\n')}`);
    const temporal = recipes.flatMap(({ recipe, file }) => (recipe.type === 'temporal' ? [{ recipe, file }] : []));
    const sentinel = recipes.flatMap(({ recipe, file }) => (recipe.type === 'sentinel' ? [{ recipe, file }] : []));
    if (!starting) this.log(`recipes reloaded (${why}): ${temporal.length} temporal, ${sentinel.length} sentinel`);
    this.temporal.set(temporal, starting);
    this.sentinels.set(sentinel);
  }

  async stop(): Promise<void> {
    clearInterval(this.poll);
    await this.dispatch?.stop();
    await this.watch?.close();
    this.temporal.stop();
    await this.sentinels.stop();
    await this.temporal.idle();
    await this.publisher?.flush();
    this.store.close();
    this.lock.release();
  }
}
