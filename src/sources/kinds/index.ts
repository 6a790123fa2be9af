// Each live kind's watcher, by kind. A watcher sets itself up, reports
// through its SourceRun and tears down when the run's signal aborts.
import type { SourceRun } from '../run.ts';
import { runCir } from './cir.ts';
import { runFeed } from './feed.ts';
import { runFile } from './file.ts';
import { runFormula } from './formula.ts';
import { runHttp } from './http.ts';
import { runLog } from './log.ts';
import { runShell } from './shell.ts';
import { runWs } from './ws.ts';

export type SourceRunner = (run: SourceRun) => void | Promise<void>;

export const runners: Record<string, SourceRunner> = {
  http: runHttp,
  ws: runWs,
  feed: runFeed,
  file: runFile,
  log: runLog,
  shell: runShell,
  formula: runFormula,
  cir: runCir,
};
