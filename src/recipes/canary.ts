// The canary: a minimal call to the first step's backend before any step
// runs, so a missing login, a dead endpoint or a hung CLI stops the run in
// seconds instead of after the first real step times out.
import { join } from 'node:path';
import type { StepPool } from './pool/step-pool.ts';
import type { BackendSpec, StepOutcome, VmSpec } from './pool/step-task.ts';

export const CANARY_PROMPT = 'This is a connectivity check. Reply with the single word OK.';

export async function runCanary(
  pool: StepPool,
  input: { backend: BackendSpec; cwd: string; env: Record<string, string>; timeoutSeconds: number; runDir: string; vm: VmSpec | null },
  signal: AbortSignal,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const backend: BackendSpec = input.backend.kind === 'custom' ? { ...input.backend, args: [] } : input.backend;
  const ms = input.timeoutSeconds * 1000;
  const outcome: StepOutcome = await pool.run(
    {
      kind: 'canary',
      label: 'canary',
      cwd: input.cwd,
      env: { ...input.env, VIGIL_CANARY: '1' },
      backend,
      prompt: CANARY_PROMPT,
      maxPhases: 1,
      timeoutMs: ms,
      inactivityMs: ms,
      // A step that must be isolated has its canary isolated too.
      vm: input.vm,
      outputFile: join(input.runDir, 'steps', 'canary.log'),
    },
    () => {},
    signal,
  );
  if (outcome.status === 'succeeded') return { ok: true };
  if (outcome.status === 'killed') return { ok: false, reason: `no answer within canary_timeout (${input.timeoutSeconds} s)` };
  return { ok: false, reason: outcome.reason };
}
