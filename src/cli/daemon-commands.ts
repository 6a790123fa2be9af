// `vigil daemon`: runs the project's temporal and sentinel recipes until
// SIGINT/SIGTERM. A second daemon for the same project is refused (exit 1),
// naming the one that runs.
import type { CAC } from 'cac';
import { applyBaseFlag, baseHelp } from './base-flag.ts';
import { ExitCode, STOP_SIGNALS, signalExit } from '../errors/exit-codes.ts';
import { defineCommand, exitWith, fail } from './command.ts';

export function registerDaemonCommands(cli: CAC): void {
  defineCommand(cli, 'daemon', 'Run the temporal and sentinel recipes of this project (one daemon per project)', {
    details: 'Runs every enabled temporal and sentinel recipe of .vigil/recipes and ~/.vigil/recipes, reloads when recipe files change, keeps its state in .vigil/vigil.db',
  })
    .option('--base <url>', `${baseHelp}: where firings and reactions are published, and what sentinels watch when their recipe names no base`, { type: [String] })
    .option('--no-publish', 'Do not publish firings and reactions to the server of vigil.yml')
    .example('vigil daemon')
    .action(async (options: { publish?: boolean; base?: unknown }) => {
      applyBaseFlag(options.base);
      const [{ Daemon }, { findProjectRoot }] = await Promise.all([import('../triggers/daemon.ts'), import('../workspace/project-root.ts')]);
      const projectRoot = findProjectRoot();
      let daemon: Awaited<ReturnType<typeof Daemon.start>>;
      try {
        daemon = await Daemon.start({ projectRoot, publish: options.publish !== false });
      } catch (error) {
        fail(error, 'vigil daemon');
      }
      process.stderr.write(`vigil daemon: running for ${projectRoot} (pid ${process.pid}); state in .vigil/vigil.db\n`);
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) exitWith(signalExit(signal));
        stopping = true;
        process.stderr.write(`vigil daemon: ${signal}, stopping\n`);
        void daemon.stop().then(() => exitWith(ExitCode.ok));
      };
      for (const s of STOP_SIGNALS) process.on(s, stop);
    });
}
