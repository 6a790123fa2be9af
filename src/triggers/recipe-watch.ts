// Watches the project and user recipe folders with chokidar and calls back
// (debounced) when a recipe file is added, changed or removed, so the daemon
// reloads without restarting.
import { existsSync, mkdirSync } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import { recipeDirs } from '../recipes/loading/discovery.ts';
import { isRecipeFile } from '../recipes/loading/recipe-text.ts';

export interface RecipeWatch {
  ready: Promise<void>;
  close(): Promise<void>;
}

export function watchRecipes(projectRoot: string, onChange: (why: string) => void, debounceMs = 150): RecipeWatch {
  const dirs = recipeDirs(projectRoot);
  mkdirSync(dirs[0]!.dir, { recursive: true });
  const paths = dirs.map((d) => d.dir).filter((d) => existsSync(d));
  const watcher: FSWatcher = watch(paths, { ignoreInitial: true, depth: 0 });
  let timer: NodeJS.Timeout | undefined;
  const changed = (event: string) => (path: string) => {
    if (!isRecipeFile(path)) return;
    clearTimeout(timer);
    timer = setTimeout(() => onChange(`${event} ${path}`), debounceMs);
  };
  watcher.on('add', changed('added')).on('change', changed('changed')).on('unlink', changed('removed'));
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    async close() {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}
