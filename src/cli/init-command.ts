// `vigil init`: a vigil.yml, a local agent that needs no model, and one
// runnable recipe of each type in .vigil/recipes/ (src/recipes/starter).
// Existing files are left alone unless --force; nothing is written when any
// would be overwritten, nor when a path on the way is a symbolic link
// (write-starter.ts: init never writes through a link or outside the folder).
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CAC } from 'cac';
import { defineCommand } from './command.ts';
import { UsageError } from './options.ts';

export function registerInitCommand(cli: CAC): void {
  defineCommand(cli, 'init [dir]', 'Start a project: vigil.yml, a local agent that needs no model, and one runnable recipe of each type in .vigil/recipes/', {
    details: 'Writes vigil.yml, .vigil/agents/local-agent.mjs and .vigil/recipes/*.json (in dir, default the current directory); refuses to overwrite a file unless --force',
  })
    .option('--force', 'Overwrite files that already exist')
    .example('vigil init && vigil recipe list && vigil sequence hello')
    .action(async (dir: string | undefined, options: { force?: boolean }) => {
      const [{ starterFiles }, { planStarter, writeStarterFile }] = await Promise.all([import('../recipes/starter/starter-files.ts'), import('../recipes/starter/write-starter.ts')]);
      const root = resolve(dir ?? '.');
      const files = starterFiles();
      const { existing, refused } = planStarter(root, files);
      if (refused.length > 0) throw new UsageError(`init: nothing was written in ${root}:\n${refused.map((r) => `  - ${r}`).join('\n')}`);
      if (existing.length > 0 && !options.force) {
        throw new UsageError(`init: ${existing.join(', ')} already ${existing.length > 1 ? 'exist' : 'exists'} in ${root}; nothing was written (--force overwrites)`);
      }
      mkdirSync(root, { recursive: true });
      for (const file of files) {
        writeStarterFile(root, file);
        process.stdout.write(`${existing.includes(file.path) ? 'overwrote' : 'wrote'} ${file.path}\n`);
      }
      process.stdout.write(
        '\nNext: vigil recipe list, then vigil sequence hello (the README\'s quick start runs every type).\n' +
          'The local agent runs the "run:" lines of its prompt; set default_backend in vigil.yml to use claude or codex.\n',
      );
    });
}
