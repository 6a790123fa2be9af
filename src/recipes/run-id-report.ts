// How a `vigil sequence` process tells the process that started it which run
// it started (run-recipe.ts: sdk.sequence.run): the starter opens a pipe as
// the child's file descriptor 3 and names it in VIGIL_RUN_ID_FD; the runner
// writes its root run's id there, one line, as soon as the run's record
// exists, and closes it. The variable is taken out of the runner's
// environment first, so no step (nor a `vigil sequence` a step starts) sees it.
import { closeSync, fstatSync, writeSync } from 'node:fs';

export const RUN_ID_FD_ENV = 'VIGIL_RUN_ID_FD';
/** The descriptor run-recipe.ts gives the runner (stdio[3]). */
export const RUN_ID_FD = 3;

/** Takes VIGIL_RUN_ID_FD out of `env`; returns how to report the run id, or null when nothing asked for it (or the descriptor is no pipe nor socket). */
export function takeRunIdReporter(env: NodeJS.ProcessEnv): ((runId: string) => void) | null {
  const raw = env[RUN_ID_FD_ENV];
  delete env[RUN_ID_FD_ENV];
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return null;
  const fd = Number(raw);
  try {
    const stat = fstatSync(fd);
    // Node's pipes are socket pairs; a shell's are FIFOs.
    if (fd < 3 || !(stat.isSocket() || stat.isFIFO())) return null;
  } catch {
    return null;
  }
  let reported = false;
  return (runId) => {
    if (reported) return;
    reported = true;
    try {
      writeSync(fd, `${runId}\n`);
      closeSync(fd);
    } catch {
      // the starter went away: nothing to tell
    }
  };
}

/** The run id a runner reported (the first line written), or null. */
export function reportedRunId(text: string): string | null {
  const id = text.split('\n')[0]!.trim();
  return /^[0-9A-Za-z][0-9A-Za-z._-]*$/.test(id) ? id : null;
}
