// VM isolation for steps with `vm: true`: the agent and its build command run
// under bubblewrap with a read-only root, a private /tmp, their own PID
// namespace, and only the step's directory writable. Where bwrap is not
// installed the run is refused before it starts; there is never a silent
// fallback to running unisolated.
import { RunRefusedError } from '../errors.ts';
import type { VmSpec } from '../pool/step-task.ts';
import { findOnPath } from '../../paths/which.ts';

export function requireBubblewrap(labels: string[], file: string): string {
  const bwrap = findOnPath('bwrap');
  if (!bwrap) {
    throw new RunRefusedError(
      `${file}: ${labels.length === 1 ? `step "${labels[0]}" asks` : `steps ${labels.map((l) => `"${l}"`).join(', ')} ask`} for VM isolation (vm: true), but bubblewrap (bwrap) is not installed; install it (e.g. apt-get install bubblewrap) or set "vm": false. Nothing was started.`,
    );
  }
  return bwrap;
}

export function sandboxCommand(vm: VmSpec | null, cwd: string, command: string, args: string[]): { command: string; args: string[] } {
  if (!vm) return { command, args };
  const binds = vm.writable.flatMap((dir) => ['--bind', dir, dir]);
  return {
    command: vm.bwrap,
    args: [
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      ...binds,
      '--unshare-all', '--share-net',
      '--die-with-parent',
      '--chdir', cwd,
      '--', command, ...args,
    ],
  };
}
