// What counts as destructive: checks over one normalised command (see
// command-normalise.ts: wrappers, paths and tools' global options already
// taken off) in the folder it runs in, and over SQL text. A rule answers an
// intent ("recursive delete of /usr"), or "cannot tell" when what the command
// would touch is only known when it runs.
import { joinPath } from './paths.ts';
import { shown } from './shell-words.ts';
import { classifyTarget, type TargetUse } from './target-paths.ts';

export interface Verdict {
  verdict: 'intent' | 'cannot tell';
  pattern: string;
}

// GNU tools take any unambiguous prefix of a long option: --rec is --recursive.
const flagHas = (argv: readonly string[], short: string, long: readonly string[]) =>
  argv.some((a) => long.some((l) => a.length >= 5 && l.startsWith(a) && a.startsWith('--')) || (/^-[A-Za-z]+$/.test(a) && a.includes(short)));

const operands = (argv: readonly string[]) => {
  const i = argv.indexOf('--');
  return i >= 0 ? [...argv.slice(0, i).filter((a) => !a.startsWith('-')), ...argv.slice(i + 1)] : argv.filter((a) => !a.startsWith('-'));
};

/** The first vital target, else the first that cannot be placed. */
export function judgeTargets(targets: readonly string[], cwd: string, what: string, unknownToo = true, use: TargetUse = 'delete'): Verdict | undefined {
  const where = (t: string) => (t.startsWith('/') || t.startsWith('$HOME') || cwd === '.' ? '' : ` (in ${shown(cwd)})`);
  const vital = targets.find((t) => classifyTarget(t, cwd, use) === 'vital');
  if (vital !== undefined) return { verdict: 'intent', pattern: `${what} ${shown(vital)}${where(vital)}` };
  const unknown = targets.find((t) => classifyTarget(t, cwd, use) === 'unknown');
  if (unknown !== undefined && unknownToo)
    return { verdict: 'cannot tell', pattern: `cannot tell: ${what} ${shown(unknown)}${where(unknown)}, a target only known when it runs or outside the workspace` };
  return undefined;
}

const intent = (pattern: string): Verdict => ({ verdict: 'intent', pattern });

type Rule = (argv: string[], cwd: string) => Verdict | undefined;

const rules: Rule[] = [
  ([cmd, ...args], cwd) => {
    if (cmd === 'rm' && (flagHas(args, 'r', ['--recursive']) || flagHas(args, 'R', []))) return judgeTargets(operands(args), cwd, 'recursive delete of');
    // One file: only keys and credentials are vital (`rm ~/.ssh/id_ed25519`).
    if (cmd === 'rm' || cmd === 'unlink' || cmd === 'shred') return judgeTargets(operands(args), cwd, 'delete of', false, 'file');
    return undefined;
  },
  ([cmd, ...args], cwd) => {
    if (cmd !== 'find') return undefined;
    const start = args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!');
    const paths = start < 0 ? args : args.slice(0, start);
    const deletes = args.includes('-delete') || args.some((a, i) => ['-exec', '-execdir', '-ok', '-okdir'].includes(a) && ['rm', 'shred', 'unlink'].includes((args[i + 1] ?? '').replace(/^.*\//, '')));
    return deletes ? judgeTargets(paths.length > 0 ? paths : ['.'], cwd, 'find that deletes under', true, 'find') : undefined;
  },
  ([cmd, ...args], cwd) =>
    (cmd === 'chmod' || cmd === 'chown' || cmd === 'chgrp') && flagHas(args, 'R', ['--recursive'])
      ? judgeTargets(operands(args).slice(1), cwd, `recursive ${cmd} of`, true, 'change')
      : undefined,
  ([cmd, ...args], cwd) => (cmd === 'rimraf' || cmd === 'del-cli' ? judgeTargets(operands(args), cwd, 'recursive delete of') : undefined),
  ([cmd, ...args], cwd) => {
    if (cmd === 'mv') return judgeTargets(operands(args).slice(0, -1), cwd, 'move away of', false);
    if (cmd === 'rsync' && args.some((a) => a.startsWith('--delete') || a === '--remove-source-files')) return judgeTargets(operands(args).slice(-1), cwd, 'rsync --delete into');
    return undefined;
  },
  ([cmd, ...args], cwd) => archiveThatRemoves(cmd, args, cwd),
  ([cmd, sub, ...args]) => {
    if (cmd !== 'git') return undefined;
    if (sub === 'push') {
      if (args.some((a) => ['--force', '--force-with-lease', '--mirror', '--delete', '--prune'].includes(a) || a.startsWith('--force-with-lease=') || /^-[A-Za-z]*[fd][A-Za-z]*$/.test(a)))
        return intent('force push or remote branch deletion');
      if (args.some((a) => /^\+./.test(a) || /^:[^/\s]/.test(a))) return intent('force push or remote branch deletion');
    }
    if (sub === 'clean' && flagHas(args, 'f', ['--force']) && flagHas(args, 'x', []) && flagHas(args, 'd', [])) return intent('git clean -fdx');
    return undefined;
  },
  ([cmd, sub, ...args]) => {
    if (cmd === 'terraform' || cmd === 'tofu') {
      if (sub === 'destroy' || (sub === 'apply' && args.some((a) => a === '-destroy' || a === '--destroy'))) return intent(`${cmd} destroy`);
    }
    if (cmd === 'pulumi' && (sub === 'destroy' || (sub === 'stack' && args[0] === 'rm'))) return intent('pulumi destroy');
    if ((cmd === 'kubectl' || cmd === 'oc') && sub === 'delete') return intent(`${cmd} delete`);
    if (cmd === 'helm' && (sub === 'uninstall' || sub === 'delete')) return intent('helm uninstall');
    if (cmd === 'dropdb') return intent('dropdb');
    if (cmd === 'gh' && sub === 'repo' && args[0] === 'delete') return intent('gh repo delete');
    if (cmd === 'aws' && sub === 's3' && ((args[0] === 'rm' && args.includes('--recursive')) || (args[0] === 'rb' && args.includes('--force')))) return intent(`aws s3 ${args[0]}`);
    return undefined;
  },
  ([cmd, ...args]) => {
    if (cmd && /^mkfs(?:\.\w+)?$/.test(cmd)) return intent('mkfs');
    if (cmd === 'dd' && args.some((a) => /^of=\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)/.test(a))) return intent('raw write to a disk device');
    if ((cmd === 'shred' || cmd === 'wipefs') && args.some((a) => a.startsWith('/dev/'))) return intent(`${cmd} of a device`);
    return undefined;
  },
];

// tar's options that take a value (a bundle's letters take theirs in order: `czf out.tgz`).
const tarValues = new Set(['-f', '-C', '-T', '-X', '-b', '-g', '-H', '-K', '-L', '-N', '-V', '-I', '-F', '--file', '--directory', '--files-from', '--exclude-from', '--blocking-factor', '--listed-incremental', '--format', '--starting-file', '--tape-length', '--newer', '--after-date', '--label', '--use-compress-program', '--info-script', '--new-volume-script', '--exclude', '--transform', '--xform', '--owner', '--group', '--mode', '--mtime', '--index-file', '--rsh-command', '--volno-file', '--to-command', '--newer-mtime', '--record-size', '--level', '--occurrence', '--checkpoint-action']);

/**
 * Archivers that remove what they take: `tar --remove-files`, `zip -m`, `7z a -sdl`. Their operands (after
 * tar's -C, in the folder it names) are judged as a tree delete.
 */
function archiveThatRemoves(cmd: string | undefined, args: string[], cwd: string): Verdict | undefined {
  if (cmd === 'tar') {
    if (!args.some((a) => a.length >= 6 && '--remove-files'.startsWith(a))) return undefined;
    if (args.some((a) => a === '-T' || a.startsWith('--files-from'))) return { verdict: 'cannot tell', pattern: 'cannot tell: tar --remove-files of the files a list names, only known when it runs' };
    let dir = cwd;
    const targets: Array<[string, string]> = [];
    for (let i = 0; i < args.length; i += 1) {
      const a = args[i]!;
      const bundle = i === 0 && /^[A-Za-z]+$/.test(a) ? `-${a}` : /^-[A-Za-z]+$/.test(a) ? a : undefined;
      if (bundle) {
        // Each letter that takes a value takes the next word, in order (`cf out.tar`, `-czf out.tgz`).
        for (const letter of bundle.slice(1)) if (tarValues.has(`-${letter}`)) {
          const value = args[++i];
          if (letter === 'C' && value !== undefined) dir = joinPath(dir, value);
        }
      } else if (a.startsWith('--')) {
        const name = a.split('=')[0]!;
        const value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : tarValues.has(name) ? args[++i] : undefined;
        if (name === '--directory' && value !== undefined) dir = joinPath(dir, value);
      } else if (a !== '-') targets.push([a, dir]);
    }
    for (const [t, d] of targets) {
      const found = judgeTargets([t], d, 'tar --remove-files of');
      if (found) return found;
    }
    return undefined;
  }
  if (cmd === 'zip' && args.some((a) => a === '--move' || /^-[A-Za-z0-9]*m[A-Za-z0-9]*$/.test(a))) {
    if (args.includes('-@')) return { verdict: 'cannot tell', pattern: 'cannot tell: zip -m of the files read from its input, only known when it runs' };
    const files = zipOperands(args);
    return judgeTargets(files.slice(1), cwd, 'zip -m of');
  }
  if ((cmd === '7z' || cmd === '7za' || cmd === '7zr') && args.includes('-sdel')) return judgeTargets(operands(args).slice(2), cwd, '7z -sdel of');
  return undefined;
}

/** zip's operands: the archive, then the files (-x and -i take the words after them as patterns). */
function zipOperands(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const a = args[i]!;
    if (a === '-x' || a === '-i' || a === '--exclude' || a === '--include') {
      while (args[i + 1] !== undefined && !args[i + 1]!.startsWith('-')) i += 1;
    } else if (['-b', '-n', '-t', '-tt', '-O', '--out', '-P', '--password', '-Z', '-s', '-sp'].includes(a)) i += 1;
    else if (!a.startsWith('-')) out.push(a);
  }
  return out;
}

/** What is destructive about this normalised command in this folder, if anything. */
export function destructiveCommand(argv: readonly string[], cwd = '.'): Verdict | undefined {
  if (argv.length === 0) return undefined;
  const plain = [...argv];
  for (const rule of rules) {
    const found = rule(plain, cwd);
    if (found) return found;
  }
  return undefined;
}

/** Destructive SQL in a text: DROP, TRUNCATE, DELETE without WHERE. */
export function destructiveSql(text: string): string | undefined {
  const clean = text.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ');
  for (const statement of clean.split(';')) {
    const s = statement.replace(/\s+/g, ' ').trim();
    if (/\bdrop\s+(?:table|database|schema)\b/i.test(s)) return 'DROP TABLE/DATABASE';
    // `truncate -s 0 file` is a shell command; SQL's TRUNCATE names a table.
    if (/\btruncate\s+table\b/i.test(s) || /\bTRUNCATE\s+[A-Za-z_"`]/.test(s)) return 'TRUNCATE TABLE';
    if (/\bdelete\s+from\s+[\w."`[\]]+/i.test(s) && !/\bwhere\b/i.test(s.slice(s.search(/\bdelete\s+from\b/i)))) return 'DELETE without WHERE';
  }
  return undefined;
}

/** A fork bomb has no argv to check: it is a shape of the text. */
export const forkBomb = /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/;
