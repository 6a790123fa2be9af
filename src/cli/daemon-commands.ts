// `vigil daemon`: runs the project's temporal and sentinel recipes until
// SIGINT/SIGTERM. A second daemon for the same project is refused (exit 1),
// naming the one that runs.
import type { CAC } from 'cac';
import { applyBaseFlag, baseHelp } from './base-flag.ts';

export function registerDaemonCommands(cli: CAC): void {
  cli
    .command('daemon', 'Run the temporal and sentinel recipes of this project (one daemon per project)')
    .usage('daemon\n\n  Runs every enabled temporal and sentinel recipe of .vigil/recipes and ~/.vigil/recipes, reloads when recipe files change, keeps its state in .vigil/vigil.db')
    .option('--base <url>', `${baseHelp}: where firings and reactions are published, and what sentinels watch when their recipe names no base`, { type: [String] })
    .option('--no-publish', 'Do not publish firings and reactions to the server of vigil.yml')
    .example((name) => `  $ ${name} daemon`)
    .action(async (options: { publish?: boolean; base?: unknown }) => {
      applyBaseFlag(options.base);
      const [{ Daemon }, { exitCodeOf }, { findProjectRoot }] = await Promise.all([
        import('../triggers/daemon.ts'),
        import('../recipes/errors.ts'),
        import('../workspace/project-root.ts'),
      ]);
      const projectRoot = findProjectRoot();
      let daemon: Awaited<ReturnType<typeof Daemon.start>>;
      try {
        daemon = await Daemon.start({ projectRoot, publish: options.publish !== false });
      } catch (error) {
        process.stderr.write(`vigil daemon: ${(error as Error).message}\n`);
        process.exit(error instanceof Error && error.name === 'DaemonRunningError' ? 1 : exitCodeOf(error));
      }
      process.stderr.write(`vigil daemon: running for ${projectRoot} (pid ${process.pid}); state in .vigil/vigil.db\n`);
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
        stopping = true;
        process.stderr.write(`vigil daemon: ${signal}, stopping\n`);
        void daemon.stop().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      process.on('SIGHUP', stop);
    });
}
