// Process groups that end when the process supervising them dies, even by
// SIGKILL: a small shell holds a pipe from the supervisor on fd 3 and, at EOF,
// SIGKILLs the group. Each line the supervisor writes on that pipe is the
// seconds the group may still run (a lease's time left); a watcher that hears
// of no renewal in that time stops the group (SIGTERM, then SIGKILL) by
// itself, even while the supervisor is stopped. A trigger's target runs under
// `targetGuard` (the guard is the target's parent, in its group); an agent
// gets a watcher beside it (`watchGroup`), so the runner stays the agent's
// parent: it reaps the agent at once and sees its own exit status and signal,
// where an agent under a guard killed with its group would linger as a zombie
// until init reaps it.
import { spawn } from 'node:child_process';

/**
 * Reads fd 3; `$g` is the group to stop: `0` (its own) or `-<pgid>`. A line arms a timer (a subshell and its
 * `sleep`); a renewal, or TERM to the watcher (its target has ended), disarms it with USR1, which ends the
 * sleep with it: killed outright, the subshell left its sleep behind, and, not disarmed at all, the timer
 * outlived a target that had ended, for the rest of its lease. A timer that has run out no longer hears
 * USR1: its own TERM to the group reaches the watcher, whose disarming would otherwise cancel the KILL.
 * A USR1 that comes before the timer's trap is set is remembered (`d`) and honoured once its sleep exists:
 * under load, a renewal right after the arm ended the subshell by USR1's default and left its sleep
 * running in the group for the rest of the lease (seen in CI, then 35 of 600 tries on a loaded machine).
 */
const WATCH = `k=
disarm() { [ -n "$k" ] && kill -USR1 "$k" 2>/dev/null; k=; }
arm() { disarm; ( trap '' TERM; d=; trap 'd=1' USR1; sleep "$1" & s=$!; trap 'kill -KILL $s 2>/dev/null; exit 0' USR1; [ -n "$d" ] && { kill -KILL $s 2>/dev/null; exit 0; }; wait $s && { trap '' USR1; kill -TERM $g; sleep 2; kill -KILL $g; } ) </dev/null >/dev/null 2>&1 & k=$!; }
trap 'disarm; exit 0' TERM
while read -r t <&3; do [ -n "$t" ] && arm "$t"; done
kill -KILL $g`;

/** Runs "$@" with stdin closed, in the guard's group; the guard's stdin is the supervisor's pipe. */
export const targetGuard = `exec 3<&0
"$@" 3<&- </dev/null &
c=$!
(
  g=0
  ${WATCH.replaceAll('\n', '\n  ')}
) &
w=$!
wait "$c"; s=$?
kill "$w" 2>/dev/null
exit "$s"`;

/**
 * A watcher, in a group of its own, that SIGKILLs process group `pgid` when
 * this process dies. Kill it (`stop`) once the group has ended on its own,
 * before its number can be reused.
 */
export function watchGroup(pgid: number): { stop(): void } {
  const watcher = spawn('/bin/sh', ['-c', `exec 3<&0 </dev/null\ng=-"$1"\n${WATCH}`, 'vigil-watch', String(pgid)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  watcher.on('error', () => {}); // no shell: the group is then only as safe as before
  watcher.stdin.on('error', () => {});
  return {
    stop: () => {
      if (watcher.exitCode === null && watcher.signalCode === null) watcher.kill('SIGKILL');
    },
  };
}
