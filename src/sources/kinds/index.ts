// Each live kind's watcher, by kind, loaded on first use (mathjs, feedsmith
// and the WebSocket client cost start-up time a server without such
// sources should not pay). A watcher sets itself up, reports through its
// SourceRun and tears down when the run's signal aborts.
import type { SourceRun } from '../run.ts';

export type SourceRunner = (run: SourceRun) => void | Promise<void>;

export const runners: Record<string, () => Promise<SourceRunner>> = {
  http: async () => (await import('./http.ts')).runHttp,
  ws: async () => (await import('./ws.ts')).runWs,
  feed: async () => (await import('./feed.ts')).runFeed,
  file: async () => (await import('./file.ts')).runFile,
  log: async () => (await import('./log.ts')).runLog,
  shell: async () => (await import('./shell.ts')).runShell,
  formula: async () => (await import('./formula.ts')).runFormula,
  cir: async () => (await import('./cir.ts')).runCir,
};
