// `vigil init`: a vigil.yml, a local agent that needs no model, and one
// runnable recipe of each type in .vigil/recipes/ (src/recipes/starter).
// Existing files are left alone unless --force; nothing is written when any
// would be overwritten, nor when a path on the way is a symbolic link
// (write-starter.ts: init never writes through a link or outside the folder).
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CAC } from 'cac';
import { defineCommand } from './command.ts';
import { UsageError } from './options.ts';

export function registerInitCommand(cli: CAC): void {
  defineCommand(cli, 'init [dir]', 'Start a project: vigil.yml, a local agent that needs no model, and one runnable recipe of each type in .vigil/recipes/', {
    details: 'Writes vigil.yml, .vigil/.gitignore (run records, worktrees and state stay out of git), .vigil/agents/local-agent.mjs and .vigil/recipes/*.json (*.yml with --yaml) (in dir, default the current directory); refuses to overwrite a file unless --force',
  })
    .option('--force', 'Overwrite files that already exist')
    .option('--yaml', 'Write the starter recipes as YAML (.vigil/recipes/*.yml) instead of JSON')
    .example('vigil init && vigil recipe list && vigil sequence hello')
    .action(async (dir: string | undefined, options: { force?: boolean; yaml?: boolean }) => {
      const [{ starterFiles }, { planStarter, writeStarterFile }] = await Promise.all([import('../recipes/starter/starter-files.ts'), import('../recipes/starter/write-starter.ts')]);
      const root = resolve(dir ?? '.');
      const files = starterFiles({ yaml: options.yaml === true });
      const { existing, refused } = planStarter(root, files);
      refused.push(...otherFormatRecipes(root, files));
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

/** A starter recipe already there in the other format (hello.json for --yaml's hello.yml) would make two recipes of one name. */
function otherFormatRecipes(root: string, files: ReadonlyArray<{ path: string }>): string[] {
  const out: string[] = [];
  for (const { path } of files) {
    const match = /^(\.vigil\/recipes\/.+)\.(json|yml)$/.exec(path);
    if (!match) continue;
    for (const ext of ['json', 'yml', 'yaml'].filter((e) => e !== match[2])) {
      const other = `${match[1]}.${ext}`;
      if (existsSync(join(root, other))) out.push(`${other} is there: ${path} would give its recipe a second file (remove ${other}, or init ${match[2] === 'yml' ? 'without' : 'with'} --yaml)`);
    }
  }
  return out;
}
