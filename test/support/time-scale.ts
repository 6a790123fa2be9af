// How much longer than on a quiet 4-core machine a wait may take here. The
// limits in tests exist to catch hangs, not to time anything: on a busy
// 2-core machine a server start that takes 3 s when quiet can take 30.
// VIGIL_TEST_TIME_SCALE overrides the guess (e.g. 4 on a loaded CI runner).
import { availableParallelism, loadavg } from 'node:os';

function guess(): number {
  const fromEnv = Number(process.env.VIGIL_TEST_TIME_SCALE);
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv;
  const cores = availableParallelism();
  const fewCores = Math.max(1, 4 / cores);
  // Load already on the machine when the run starts (other runs, builds).
  const busy = Math.max(1, loadavg()[0]! / cores);
  return Math.min(6, Math.ceil(fewCores * busy));
}

/**
 * A limit meant for a quiet machine, stretched to this one as it is now: a worker runs many files one
 * after another (vitest.config.ts), and the load when it started says little about the load later.
 */
export function scaled(ms: number): number {
  return Math.round(ms * guess());
}
