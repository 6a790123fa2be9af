// What a run or daemon could not publish before it ended, kept for the next
// one of the project that reaches the same server: a run that ended while its
// server was away (restarted, redeployed) would otherwise never reach the run
// monitor, and a sentinel on `@runs` would never hear of it. The file is
// `unpublished.jsonl` in the project's folder under the Vigil home, one
// observation per line with the server it was meant for. A publisher takes it
// by renaming it to `unpublished.<pid>.<n>.jsonl`, so two runners never both
// send it; the taken file is removed once what it held is published or kept
// again, and one left by a process that died is taken by the next. Delivery is
// at least once: a process killed after publishing part of what it took
// leaves the whole file to be sent again.
import { appendFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../../file-lock/process-alive.ts';
import { ensureProjectHome, projectHome } from '../../home/home.ts';

export interface KeptObservation {
  type: string;
  subject: string;
  data: Record<string, unknown>;
  actor: string;
}

/** The most the file grows to: past it, what a run could not publish is given up (and said). */
const mostBytes = 16 * 1024 * 1024;

const fileName = 'unpublished.jsonl';
/** `unpublished.<pid>.<n>.jsonl`: a file taken by process `pid`. */
const takenFile = /^unpublished\.(\d+)\.\d+\.jsonl$/;
let taking = 0;

export const unpublishedFile = (projectRoot: string): string => join(projectHome(projectRoot), fileName);

/** Appends `observations` for `base`; returns how many were kept (none once the file is full). */
export function keepUnpublished(projectRoot: string, base: string, observations: readonly KeptObservation[]): number {
  if (observations.length === 0) return 0;
  const file = join(ensureProjectHome(projectRoot), fileName);
  const size = existsSync(file) ? statSync(file).size : 0;
  const text = observations.map((o) => `${JSON.stringify({ base, ...o })}\n`).join('');
  if (size + text.length > mostBytes) return 0;
  // One write with O_APPEND: lines of two runners ending at once do not interleave.
  appendFileSync(file, text, { mode: 0o600 });
  return observations.length;
}

/**
 * Takes what earlier runs kept for `base` (and what a process that died had taken), oldest first;
 * what was kept for another server is kept again. `done` removes the taken file: call it once what it
 * returned is published or kept again.
 */
export function takeUnpublished(projectRoot: string, base: string): { observations: KeptObservation[]; done: () => void } {
  const dir = projectHome(projectRoot);
  if (!existsSync(dir)) return { observations: [], done: () => {} };
  const leftByTheDead = readdirSync(dir).filter((f) => {
    const pid = Number(takenFile.exec(f)?.[1] ?? Number.NaN);
    return Number.isInteger(pid) && pid !== process.pid && !processAlive(pid);
  });
  const taken: string[] = [];
  const lines: string[] = [];
  for (const source of [...leftByTheDead, fileName]) {
    const mine = join(dir, `unpublished.${process.pid}.${taking++}.jsonl`);
    try {
      renameSync(join(dir, source), mine);
    } catch {
      continue; // not there, or another runner took it first
    }
    taken.push(mine);
    lines.push(...readFileSync(mine, 'utf8').split('\n').filter(Boolean));
  }
  const observations: KeptObservation[] = [];
  const elsewhere = new Map<string, KeptObservation[]>();
  for (const line of lines) {
    let parsed: Partial<KeptObservation> & { base?: unknown };
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // a line cut short by a full disk
    }
    if (typeof parsed.base !== 'string' || typeof parsed.type !== 'string' || typeof parsed.subject !== 'string') continue;
    const { base: to, ...observation } = parsed as KeptObservation & { base: string };
    if (to === base) observations.push(observation);
    else {
      const list = elsewhere.get(to) ?? [];
      list.push(observation);
      elsewhere.set(to, list);
    }
  }
  for (const [to, kept] of elsewhere) keepUnpublished(projectRoot, to, kept);
  const done = (): void => {
    for (const f of taken) rmSync(f, { force: true });
  };
  return { observations, done };
}
