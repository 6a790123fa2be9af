// How a `vigil sequence` process and the process that started it (run-recipe.ts:
// sdk.sequence.run) stay linked: the starter opens a pipe as the child's file
// descriptor 3 and names it in VIGIL_RUN_ID_FD. The runner writes its root
// run's id there, one line, as soon as the run's record exists; and while it
// runs it watches the pipe, because the starter's end closes when the starter
// dies, even by SIGKILL, and the run is then cancelled instead of going on
// unattended. The variable is taken out of the runner's environment first, so
// no step (nor a `vigil sequence` a step starts) sees it.
import { closeSync, fstatSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';

export const RUN_ID_FD_ENV = 'VIGIL_RUN_ID_FD';
/** The descriptor run-recipe.ts gives the runner (stdio[3]). */
export const RUN_ID_FD = 3;

export interface StarterLink {
  /** Tells the starter the root run's id (the first call only). */
  report(runId: string): void;
  /**
   * Calls `gone` once if the starter's end closes while this process runs; returns what stops watching. A shell's
   * FIFO cannot tell (only Node's pipes, socket pairs, can), so there nothing is watched.
   */
  watch(gone: () => void): () => void;
}

/** Takes VIGIL_RUN_ID_FD out of `env`; returns the link to the starter, or null when there is none (or the descriptor is no pipe nor socket). */
export function takeStarterLink(env: NodeJS.ProcessEnv): StarterLink | null {
  const raw = env[RUN_ID_FD_ENV];
  delete env[RUN_ID_FD_ENV];
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return null;
  const fd = Number(raw);
  let socket: boolean;
  try {
    const stat = fstatSync(fd);
    if (fd < 3 || !(stat.isSocket() || stat.isFIFO())) return null;
    socket = stat.isSocket();
  } catch {
    return null;
  }
  return socket ? socketLink(fd) : fifoLink(fd);
}

function fifoLink(fd: number): StarterLink {
  let reported = false;
  return {
    report(runId) {
      if (reported) return;
      reported = true;
      try {
        writeSync(fd, `${runId}\n`);
        closeSync(fd);
      } catch {
        // the starter went away: nothing to tell
      }
    },
    watch: () => () => {},
  };
}

function socketLink(fd: number): StarterLink {
  const link = new Socket({ fd, readable: true, writable: true });
  // The link never keeps the runner alive, and a starter gone is told by 'end', not by an error.
  link.unref();
  link.on('error', () => {});
  let reported = false;
  let gone = false;
  const onGone: Array<() => void> = [];
  const lost = (): void => {
    if (gone) return;
    gone = true;
    for (const cb of onGone.splice(0)) cb();
  };
  link.on('end', lost);
  link.on('close', lost);
  // Nothing is ever sent this way: reading is only how the starter's end is seen to close.
  link.resume();
  return {
    report(runId) {
      if (reported || gone) return;
      reported = true;
      link.write(`${runId}\n`);
    },
    watch(cb) {
      if (gone) {
        cb();
        return () => {};
      }
      onGone.push(cb);
      return () => {
        const at = onGone.indexOf(cb);
        if (at >= 0) onGone.splice(at, 1);
      };
    },
  };
}

/** The run id a runner reported (the first line written), or null. */
export function reportedRunId(text: string): string | null {
  const id = text.split('\n')[0]!.trim();
  return /^[0-9A-Za-z][0-9A-Za-z._-]*$/.test(id) ? id : null;
}
