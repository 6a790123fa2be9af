// Variables that came from outside the project — a trigger's or a webhook's
// body, an observation's data.vars, a script's sdk.sequence.run — are data:
// text for prompts, arguments and `if:`. This is the one place a variable
// becomes an environment variable of a program a run starts (an agent, a
// build command, a shell step, a pipeline `pre`, a command target): one from
// outside does only when the recipe declares it (its `parameters` or `env`,
// a trigger recipe's `vars`, or a variable Vigil itself names), and never
// when its name changes how a program starts or where it reads its code and
// settings (NODE_OPTIONS, BASH_ENV, LD_*, PATH, …). `vigil sequence` learns
// which variables came from outside from `--data-var` (what the daemon and
// sdk.sequence.run pass); `--var` is the user's own.

/** Names that change how a program starts, where it finds code or settings, or whom it trusts. */
const STARTUP_NAMES = new Set([
  'PATH', 'HOME', 'SHELL', 'ENV', 'BASH_ENV', 'SHELLOPTS', 'BASHOPTS', 'PS1', 'PS2', 'PS4', 'PROMPT_COMMAND', 'IFS', 'CDPATH', 'GLOBIGNORE', 'FPATH', 'ZDOTDIR', 'INPUTRC', 'TMPDIR',
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_EXTRA_CA_CERTS', 'NODE_TLS_REJECT_UNAUTHORIZED', 'NODE_REPL_EXTERNAL_MODULE', 'ELECTRON_RUN_AS_NODE',
  'RUBYOPT', 'RUBYLIB', 'PERLLIB', 'PHPRC', 'PHP_INI_SCAN_DIR', 'TCLLIBPATH', 'CLASSPATH', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'GCONV_PATH', 'HOSTALIASES', 'RESOLV_HOST_CONF', 'LOCALDOMAIN',
  'EDITOR', 'VISUAL', 'PAGER', 'MANPAGER', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'SSH_AUTH_SOCK', 'KUBECONFIG', 'DOCKER_HOST', 'DOCKER_CONFIG',
  'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'FTP_PROXY', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'CURL_CA_BUNDLE', 'REQUESTS_CA_BUNDLE', 'SSLKEYLOGFILE',
]);
const STARTUP_PREFIXES = ['LD_', 'DYLD_', 'PYTHON', 'PERL5', 'PERL_', 'GIT_', 'GEM_', 'BUNDLE_', 'NPM_CONFIG_', 'YARN_', 'PNPM_', 'BUN_', 'DENO_', 'LUA_', 'MALLOC_', 'XDG_', 'BASH_FUNC_', 'VIGIL_', 'ANTHROPIC_', 'OPENAI_', 'CLAUDE_', 'CODEX_'];

/** Whether a variable of this name may change how a program starts (case does not matter: npm reads npm_config_*). */
export function changesHowProgramsStart(name: string): boolean {
  const upper = name.toUpperCase();
  return STARTUP_NAMES.has(upper) || STARTUP_PREFIXES.some((p) => upper.startsWith(p));
}

/**
 * The variables a sentinel's reaction gets from Vigil itself, beside the observation's data.vars: their names are
 * Vigil's, their values data. triggers/sentinel/react.ts builds exactly these (its types say so); recipe check knows them.
 */
export const TRIGGER_VARIABLES = ['MONITOR', 'OBSERVATION_SEQ', 'OBSERVATION_TYPE', 'OBSERVATION_SUBJECT', 'OBSERVATION_DATA', 'OBSERVATION_FILE'] as const;
export type TriggerVariable = (typeof TRIGGER_VARIABLES)[number];

/** Where a run's variables came from: the values given as data, and the names the recipe declares. */
export interface VariableOrigin {
  /** Variables from outside, as given (`--data-var`). */
  outside: Readonly<Record<string, string>>;
  /** Names the recipe (or a recipe above it) declares: parameters, env keys; Vigil's trigger variables. */
  declared: ReadonlySet<string>;
}

export const NO_OUTSIDE: VariableOrigin = { outside: {}, declared: new Set() };

/** A variable is data when its value is still the one that came from outside (a recipe that set it again made it its own). */
export function isOutside(origin: VariableOrigin, name: string, value: string | undefined): boolean {
  return value !== undefined && Object.hasOwn(origin.outside, name) && origin.outside[name] === value;
}

export interface WithheldVariable {
  name: string;
  why: 'undeclared' | 'startup';
}

/** The variables that become environment variables; the ones from outside that do not, and why. */
export function environmentOf(vars: Readonly<Record<string, string>>, origin: VariableOrigin): { env: Record<string, string>; withheld: WithheldVariable[] } {
  const env: Record<string, string> = {};
  const withheld: WithheldVariable[] = [];
  for (const [name, value] of Object.entries(vars)) {
    if (!isOutside(origin, name, value)) env[name] = value;
    else if (changesHowProgramsStart(name)) withheld.push({ name, why: 'startup' });
    else if (origin.declared.has(name)) env[name] = value;
    else withheld.push({ name, why: 'undeclared' });
  }
  return { env, withheld };
}

/** A warning for each variable from outside whose name changes how programs start (the undeclared rest is plain data). */
export function withheldWarnings(withheld: readonly WithheldVariable[], where: string): string[] {
  return withheld
    .filter((w) => w.why === 'startup')
    .map((w) => `warning: ${where}: variable ${w.name} came from outside (a trigger, a webhook or a script) and is not set in the environment: it changes how programs start`);
}

/** The names a recipe declares as its inputs (and Vigil's own trigger variables). */
export function declaredBy(recipe: { parameters?: Record<string, unknown>; env?: Record<string, string>; vars?: unknown }, more: Iterable<string> = []): Set<string> {
  const names = new Set<string>([...TRIGGER_VARIABLES, ...more]);
  for (const n of Object.keys(recipe.parameters ?? {})) names.add(n);
  for (const n of Object.keys(recipe.env ?? {})) names.add(n);
  if (recipe.vars && typeof recipe.vars === 'object' && !Array.isArray(recipe.vars)) for (const n of Object.keys(recipe.vars)) names.add(n);
  return names;
}

/** `--data-var` flags for variables from outside (the daemon's trigger variables, sdk.sequence.run). */
export function dataVarFlags(vars: Readonly<Record<string, string>>): string[] {
  return Object.entries(vars).flatMap(([k, v]) => ['--data-var', `${k}=${v}`]);
}
