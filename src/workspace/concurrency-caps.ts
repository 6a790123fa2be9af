// The caps of vigil.yml `concurrency`: at most N agents of one backend
// (claude, codex, a provider of `providers`) or of every backend (`all`) run
// at once, across every runner of the machine, or of the server when
// `server:` is set. A cap is a pool of numbered slots; a step takes a slot of
// its backend's pool, then one of `all`, before its agent starts.

export const ALL_AGENTS = 'all';
/** mentu.ts's SHELL_BACKEND, not imported from there: reading vigil.yml (which checks the caps) is below it. */
const SHELL_BACKEND = 'shell';
export const DEFAULT_SLOT_LEASE_SECONDS = 60;

/** The names a cap may have besides the providers of vigil.yml. */
const BUILT_IN = ['claude', 'codex', ALL_AGENTS];

/** Problems with the `concurrency` caps, each naming its field and what is allowed. */
export function capProblems(concurrency: Record<string, number> | undefined, providers: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(concurrency ?? {})) {
    if (name === SHELL_BACKEND) problems.push(`concurrency.${name}: shell steps run no agent and take no slot; remove it`);
    else if (!BUILT_IN.includes(name) && !Object.hasOwn(providers, name))
      problems.push(`concurrency.${name}: not a backend; allowed are claude, codex, all${Object.keys(providers).length ? `, ${Object.keys(providers).join(', ')}` : ''} (the providers of vigil.yml)`);
  }
  return problems;
}

/** The pools a step of this backend takes a slot of, in the order it takes them (the same order everywhere, so no two steps wait on each other). */
export function poolsOf(backendName: string, caps: Record<string, number>): Array<{ pool: string; cap: number }> {
  if (backendName === SHELL_BACKEND) return [];
  const out: Array<{ pool: string; cap: number }> = [];
  if (caps[backendName] !== undefined && backendName !== ALL_AGENTS) out.push({ pool: backendName, cap: caps[backendName]! });
  if (caps[ALL_AGENTS] !== undefined) out.push({ pool: ALL_AGENTS, cap: caps[ALL_AGENTS]! });
  return out;
}

/** How the wait is told: `a claude slot`, `a slot of all agents`. */
export const slotName = (pool: string): string => (pool === ALL_AGENTS ? 'a slot of all agents' : `a ${pool} slot`);
