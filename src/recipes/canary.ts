// The canary: a minimal call to each distinct backend of the run (backend,
// auth profile and model) before any step runs, so a missing login, a dead
// endpoint or a hung CLI stops the run in seconds instead of after a real
// step times out. claude and codex are first asked whether they are logged
// in (codex without credentials retries for minutes before it fails).
import { join } from 'node:path';
import type { StepPool } from './pool/step-pool.ts';
import type { BackendSpec, StepOutcome, UsageReport, VmSpec } from './pool/step-task.ts';
import { claudeAuthStatus, codexAuthStatus } from './preflight/agent-auth.ts';

export const CANARY_PROMPT = 'This is a connectivity check. Reply with the single word OK.';

export interface CanaryTarget {
  /** Says which backend this is, in messages. */
  name: string;
  /** Steps that share it (the first is named in messages). */
  labels: string[];
  backend: BackendSpec;
  env: Record<string, string>;
  vm: VmSpec | null;
}

/** One target per distinct backend, auth profile and model; a target is run in a VM when any of its steps is. */
export function canaryTargets(
  steps: Array<{ label: string; backendName: string; auth?: string; backend: BackendSpec; env: Record<string, string>; vm: VmSpec | null }>,
): CanaryTarget[] {
  const targets = new Map<string, CanaryTarget>();
  for (const s of steps) {
    const model = 'model' in s.backend ? s.backend.model : undefined;
    const key = JSON.stringify([s.backendName, s.auth ?? null, model ?? null]);
    const known = targets.get(key);
    if (known) {
      known.labels.push(s.label);
      known.vm ??= s.vm;
      continue;
    }
    const name = [`"${s.backendName}"`, model ? `model ${model}` : '', s.auth ? `auth ${s.auth}` : ''].filter(Boolean).join(', ');
    targets.set(key, { name, labels: [s.label], backend: s.backend, env: s.env, vm: s.vm });
  }
  return [...targets.values()];
}

export async function runCanary(
  pool: StepPool,
  input: { backend: BackendSpec; cwd: string; env: Record<string, string>; timeoutSeconds: number; runDir: string; vm: VmSpec | null },
  signal: AbortSignal,
  /** The canary's usage, counted in the run that ran it (its record and budget). */
  onUsage: (report: UsageReport) => void = () => {},
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const backend: BackendSpec = input.backend.kind === 'custom' ? { ...input.backend, args: [] } : input.backend;
  if (backend.kind === 'claude' || backend.kind === 'codex') {
    const auth = await (backend.kind === 'claude' ? claudeAuthStatus : codexAuthStatus)(backend.command, input.env);
    if (auth.loggedIn === false) return { ok: false, reason: auth.detail };
  }
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
    (m) => {
      if (m.type === 'usage') onUsage(m.usage);
    },
    signal,
  );
  if (outcome.status === 'succeeded') return { ok: true };
  if (outcome.status === 'killed') return { ok: false, reason: `no answer within canary_timeout (${input.timeoutSeconds} s)` };
  return { ok: false, reason: outcome.reason };
}
