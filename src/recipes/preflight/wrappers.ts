// Programs that run the command given in their arguments — `sudo -u root
// rm …`, `taskset -c 0 rm …`, `unshare -r rm …`, `npm exec -- rimraf …`,
// `docker exec db psql …` — taken off so that the guard judges the command
// itself: their options (with the values they take, attached or not, read
// the way getopt reads them), the operands before the command (timeout's
// duration, chrt's priority, gosu's user), an option that moves the command
// to another folder (`env -C dir`, `sudo -D dir`, `unshare -w dir`) and one
// whose value is a shell script (`flock -c '…'`, `npm exec -c '…'`).
import type { EmbeddedScript, Stdin } from './command-types.ts';
import { UNKNOWN } from './shell-words.ts';

interface Wrapper {
  /** Options that take a value. */
  values?: readonly string[];
  /** Operands between the options and the command. */
  operands?: number;
  /** Options whose value is the folder the command runs in. */
  cwd?: readonly string[];
  /** Options whose value is a shell script, run instead of a command. */
  script?: readonly string[];
  /** Options after which the command follows as words (`nix develop -c rm …`). */
  argvAfter?: readonly string[];
  /** Options that mean there is no command to run (`taskset -p`, `command -v`). */
  noCommand?: readonly string[];
  /** The words after the operands are one shell script (`watch`, `sg group …`). */
  restIsScript?: boolean;
  /** `NAME=value` words before the command (env, cross-env). */
  assignments?: boolean;
}

const runner: Wrapper = { values: ['-p', '--package', '-w', '--workspace'], script: ['-c', '--call'] };
const container: Wrapper = { values: ['-e', '--env', '--env-file', '-u', '--user', '-w', '--workdir', '--detach-keys'], operands: 1 };

const wrappers: Record<string, Wrapper> = {
  sudo: { values: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group', '--chdir', '--host', '--prompt', '--role', '--type', '--other-user', '--command-timeout', '--close-from'], cwd: ['-D', '--chdir'], noCommand: ['-l', '-v', '-k', '-K', '-e', '--list', '--validate', '--edit'] },
  doas: { values: ['-u', '-C'] },
  run0: { values: ['-u', '--user', '-g', '--group', '--nice', '-D', '--chdir', '--property', '--setenv', '--unit', '--description', '--slice'], cwd: ['-D', '--chdir'] },
  pkexec: { values: ['--user'] },
  nice: { values: ['-n', '--adjustment'] },
  ionice: { values: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata', '--pid', '--pgid', '--uid'], noCommand: ['-p', '-P', '-u', '--pid', '--pgid', '--uid'] },
  taskset: { values: [], operands: 1, noCommand: ['-p', '--pid'] },
  chrt: { values: ['-T', '-P', '-D', '--sched-runtime', '--sched-period', '--sched-deadline'], operands: 1, noCommand: ['-p', '--pid', '-m', '--max'] },
  unshare: { values: ['-R', '--root', '-w', '--wd', '-S', '--setuid', '-G', '--setgid', '--map-user', '--map-group', '--map-users', '--map-groups', '--propagation', '--setgroups'], cwd: ['-w', '--wd'] },
  nsenter: { values: ['-t', '--target', '-S', '--setuid', '-G', '--setgid', '-r', '--root', '-w', '--wd'], cwd: ['-w', '--wd'] },
  setpriv: { values: ['--reuid', '--regid', '--ruid', '--euid', '--rgid', '--egid', '--groups', '--inh-caps', '--ambient-caps', '--bounding-set', '--securebits', '--pdeathsig', '--selinux-label', '--apparmor-profile', '--landlock-access', '--landlock-rule'] },
  cgexec: { values: ['-g'] },
  numactl: { values: ['-C', '-N', '-m', '-i', '-p', '-P', '--physcpubind', '--cpunodebind', '--membind', '--interleave', '--preferred', '--preferred-many'] },
  prlimit: { values: ['--pid'] },
  'systemd-run': { values: ['-p', '--property', '-u', '--unit', '-E', '--setenv', '--uid', '--gid', '--nice', '--slice', '--description', '-M', '--machine', '-H', '--host', '--working-directory', '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--on-calendar', '--timer-property', '--path-property', '--socket-property', '--service-type'], cwd: ['--working-directory'] },
  firejail: { values: [] },
  fakeroot: { values: ['-l', '--lib', '--faked', '-s', '-i', '-b'] },
  faketime: { values: ['-f', '-m', '-p', '--exclude-monotonic'], operands: 1 },
  strace: { values: ['-o', '-e', '-p', '-s', '-u', '-E', '-a', '-b', '-I', '-O', '-P', '-S', '-X'] },
  ltrace: { values: ['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-A', '-D', '-F', '-l', '-x', '-L'] },
  valgrind: { values: [] },
  setarch: { values: ['--uname-2.6'], operands: 1 },
  linux32: {},
  linux64: {},
  torsocks: { values: ['-u', '-p', '-a', '-P'] },
  proxychains: { values: ['-f'] },
  proxychains4: { values: ['-f'] },
  'dbus-run-session': { values: ['--config-file', '--dbus-daemon'] },
  'xvfb-run': { values: ['-n', '--server-num', '-s', '--server-args', '-f', '--auth-file', '-e', '--error-file', '-p', '--xauth-protocol'] },
  eatmydata: {},
  nocache: {},
  chpst: { values: ['-u', '-U', '-b', '-e', '-/', '-C', '-n', '-l', '-L', '-m', '-d', '-o', '-p', '-f', '-c', '-r', '-t'], cwd: ['-C'] },
  softlimit: { values: ['-m', '-d', '-s', '-l', '-a', '-o', '-p', '-f', '-c', '-r', '-t'] },
  gosu: { operands: 1 },
  'su-exec': { operands: 1 },
  tini: { values: ['-p', '-e', '-l'] },
  'dumb-init': { values: ['-r', '--rewrite'] },
  timeout: { values: ['-s', '-k', '--signal', '--kill-after'], operands: 1 },
  stdbuf: { values: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  env: { values: ['-u', '-C', '--unset', '--chdir', '-S', '--split-string', '-P'], cwd: ['-C', '--chdir'], assignments: true },
  'cross-env': { assignments: true },
  'env-cmd': { values: ['-f', '--file', '-e', '--environments', '-r', '--rc-file'] },
  dotenv: { values: ['-e', '-c', '-v'] },
  exec: { values: ['-a'] },
  command: { noCommand: ['-v', '-V'] },
  builtin: {},
  nohup: {},
  time: { values: ['-f', '-o', '--format', '--output'] },
  setsid: {},
  chronic: {},
  unbuffer: {},
  busybox: {},
  runuser: { values: ['-u', '-g', '-G', '--user', '--group', '--supp-group'], script: ['-c', '--command'] },
  chroot: { values: ['--userspec', '--groups'], operands: 1 },
  flock: { values: ['-w', '-E', '--timeout', '--conflict-exit-code'], script: ['-c', '--command'], operands: 1 },
  caffeinate: { values: ['-t', '-w'] },
  catchsegv: {},
  watch: { values: ['-n', '-d', '--interval', '--differences'], restIsScript: true },
  sg: { operands: 1, script: ['-c'], restIsScript: true },
  'nix-shell': { values: ['-p', '--packages', '-I', '--arg', '--argstr', '-A', '--attr', '-E', '--expr', '--keep', '-k'], script: ['--run', '--command'] },
  // Package runners run the named tool: `npx rimraf ~` is rimraf.
  npx: runner,
  bunx: runner,
  pnpx: runner,
};

// Wrappers spelled as a tool and its subcommand (`npm exec`, `ip netns exec`).
const subcommands: Record<string, Wrapper> = {
  'npm exec': runner,
  'npm x': runner,
  'pnpm exec': runner,
  'pnpm dlx': runner,
  'yarn exec': runner,
  'yarn dlx': runner,
  'bun x': runner,
  'poetry run': {},
  'pipenv run': {},
  'uv run': { values: ['--with', '--python', '-p', '--project', '--env-file', '--extra', '--group', '--package', '--index', '--directory'], cwd: ['--directory'] },
  'bundle exec': {},
  'mise exec': { values: ['-C', '--cd', '-j', '--jobs'], cwd: ['-C', '--cd'] },
  'mise x': { values: ['-C', '--cd', '-j', '--jobs'], cwd: ['-C', '--cd'] },
  'asdf exec': {},
  'rbenv exec': {},
  'pyenv exec': {},
  'conda run': { values: ['-n', '--name', '-p', '--prefix', '--cwd'], cwd: ['--cwd'] },
  'micromamba run': { values: ['-n', '--name', '-p', '--prefix', '--cwd'], cwd: ['--cwd'] },
  'direnv exec': { operands: 1 },
  'ip netns exec': { operands: 1 },
  'op run': { values: ['--env-file'] },
  'doppler run': { values: ['-p', '--project', '-c', '--config'] },
  'aws-vault exec': { values: ['-d', '--duration', '-t', '--mfa-token', '--region'], operands: 1 },
  'nix develop': { values: ['-i', '--keep', '-k'], argvAfter: ['-c', '--command'] },
  'docker exec': container,
  'podman exec': container,
  'kubectl exec': { values: ['-c', '--container', '-n', '--namespace', '--context', '-f', '--filename', '--pod-running-timeout'], operands: 1 },
  'oc exec': { values: ['-c', '--container', '-n', '--namespace', '--context'], operands: 1 },
};

const base = (cmd: string) => cmd.replace(/^.*\//, '');

/** Whether a program of this name runs the command given in its arguments. */
export function isWrapper(name: string): boolean {
  return Object.hasOwn(wrappers, name);
}

/** Options read the way getopt reads them; returns where the operands start and each option's value. */
export function readOptions(args: readonly string[], values: readonly string[]): { next: number; options: Array<[string, string | undefined]> } {
  const options: Array<[string, string | undefined]> = [];
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--') return { next: i + 1, options };
    if (!a.startsWith('-') || a === '-') break;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(0, eq) : a;
      if (eq > 0) options.push([name, a.slice(eq + 1)]);
      else if (values.includes(name)) options.push([name, args[++i]]);
      else options.push([name, undefined]);
      i += 1;
      continue;
    }
    // A bundle of short options: the first that takes a value takes the rest of the word, or the next word.
    let taken = false;
    for (let j = 1; j < a.length; j += 1) {
      const name = `-${a[j]}`;
      if (!values.includes(name)) {
        options.push([name, undefined]);
        continue;
      }
      options.push([name, j + 1 < a.length ? a.slice(j + 1) : args[++i]]);
      taken = true;
      break;
    }
    if (!taken && /^-\d+$/.test(a)) options.pop(); // `nice -5`: a number, not options
    i += 1;
  }
  return { next: i, options };
}

export interface Unwrapped {
  argv: string[];
  /** The folder the command runs in, relative to the one the wrapper runs in. */
  cwd?: string;
  scripts: EmbeddedScript[];
  /** `NAME=value` words given to env and the like. */
  assignments: Array<[string, string]>;
}

/** The command a chain of wrappers runs; empty argv when there is none (`command -v rm`, `taskset -p 1 42`). */
export function unwrap(argvIn: readonly string[], stdin: Stdin): Unwrapped {
  const out: Unwrapped = { argv: [...argvIn], scripts: [], assignments: [] };
  const moveTo = (dir: string | undefined) => {
    if (dir !== undefined) out.cwd = out.cwd === undefined || dir.startsWith('/') ? dir : `${out.cwd}/${dir}`;
  };
  for (let guard = 0; guard < 16 && out.argv.length > 0; guard += 1) {
    const cmd = base(out.argv[0]!);
    let args = out.argv.slice(1);
    let w = wrappers[cmd];
    const via = [cmd];
    const sub = [args[0], args[1]].filter((a): a is string => a !== undefined);
    for (let n = sub.length; !w && n >= 1; n -= 1) {
      const key = [cmd, ...sub.slice(0, n)].join(' ');
      if (subcommands[key]) {
        w = subcommands[key];
        via.push(...sub.slice(0, n));
        args = args.slice(n);
      }
    }
    if (cmd === 'xargs') {
      const r = readOptions(args, ['-I', '-L', '-n', '-P', '-s', '-d', '-E', '-a', '--max-args', '--max-lines', '--max-procs', '--max-chars', '--delimiter', '--eof', '--arg-file', '--replace', '--process-slot-var']);
      const fromFile = r.options.some(([n]) => n === '-a' || n === '--arg-file');
      const words = stdin.kind === 'text' && !fromFile ? stdin.text.split(/\s+/).filter(Boolean) : [UNKNOWN];
      const rest = args.slice(r.next);
      out.argv = [...(rest.length > 0 ? rest : ['echo']), ...words];
      continue;
    }
    if (!w) break;
    const values = [...(w.values ?? []), ...(w.script ?? []), ...(w.argvAfter ?? [])];
    const read = readOptions(args, values);
    let i = read.next;
    const options = read.options;
    if (w.assignments)
      while (i < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!)) {
        const a = args[i++]!;
        out.assignments.push([a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]);
      }
    if (w.operands && !options.some(([n]) => w.script?.includes(n) || w.noCommand?.includes(n))) {
      i += w.operands;
      // Options may follow the operands (`kubectl exec pod -c app -- …`, `flock file -c '…'`).
      const more = readOptions(args.slice(i), values);
      options.push(...more.options);
      i += more.next;
    }
    const named = (names: readonly string[] | undefined) => options.find(([n]) => names?.includes(n));
    if (named(w.noCommand)) return { ...out, argv: [] };
    if (cmd === 'env') {
      const split = named(['-S', '--split-string']);
      if (split) {
        out.argv = [...(split[1] ?? '').split(/\s+/).filter(Boolean), ...args.slice(i)];
        continue;
      }
    }
    const script = named(w.script);
    if (script) {
      out.scripts.push({ lang: 'shell', text: script[1], via: `${via.join(' ')} ${script[0]}` });
      return { ...out, argv: [] };
    }
    const after = named(w.argvAfter);
    if (after) {
      const at = args.indexOf(after[0]);
      out.argv = at >= 0 ? args.slice(at + 1) : [];
      continue;
    }
    for (const [n, v] of options) if (w.cwd?.includes(n)) moveTo(v);
    if (w.restIsScript) {
      out.scripts.push({ lang: 'shell', text: args.slice(i).join(' '), via: via.join(' ') });
      return { ...out, argv: [] };
    }
    out.argv = args.slice(i);
  }
  return out;
}
