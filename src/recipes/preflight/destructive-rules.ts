// What counts as destructive: checks over one command's argument list (after
// expansion, see shell-commands.ts) and over SQL text.
import { HOME, unwrap } from './shell-commands.ts';

const systemDirs = new Set(['bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'media', 'mnt', 'opt', 'proc', 'root', 'sbin', 'srv', 'sys', 'usr', 'var', 'Users', 'System', 'Library']);

/** `/`, `~`, `$HOME`, a top-level system folder, or everything inside one of them. */
export function isVitalPath(path: string): boolean {
  let p = path.trim().replace(/^\$\{HOME\}/, HOME);
  if (p === '') return false;
  p = p.replace(/\/\*$/, '/').replace(/(?:\/\.)+$/, '/').replace(/\/+$/, '');
  if (p === '' || p === '/*' || p === '*' || p === HOME || p === '~' || p === `${HOME}/*`) return true;
  const parts = p.split('/').filter(Boolean);
  return p.startsWith('/') && parts.length === 1 && (systemDirs.has(parts[0]!) || parts[0] === '*');
}

const flagHas = (argv: readonly string[], short: string, long: readonly string[]) =>
  argv.some((a) => long.includes(a) || (/^-[A-Za-z]+$/.test(a) && a.includes(short)));

const operands = (argv: readonly string[]) => {
  const i = argv.indexOf('--');
  return i >= 0 ? argv.slice(i + 1) : argv.filter((a) => !a.startsWith('-'));
};

type Rule = (argv: string[]) => string | undefined;

const rules: Rule[] = [
  ([cmd, ...args]) =>
    cmd === 'rm' && (flagHas(args, 'r', ['--recursive']) || flagHas(args, 'R', [])) && operands(args).some(isVitalPath)
      ? `recursive delete of ${operands(args).find(isVitalPath)}`
      : undefined,
  ([cmd, ...args]) => {
    if (cmd !== 'find') return undefined;
    const paths = args.slice(0, Math.max(0, args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!')) === -1 ? args.length : args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!'));
    const deletes = args.includes('-delete') || args.some((a, i) => (a === '-exec' || a === '-execdir') && ['rm', 'shred', 'unlink'].includes(args[i + 1] ?? ''));
    return deletes && paths.some(isVitalPath) ? `find that deletes under ${paths.find(isVitalPath)}` : undefined;
  },
  ([cmd, ...args]) =>
    (cmd === 'chmod' || cmd === 'chown' || cmd === 'chgrp') && flagHas(args, 'R', ['--recursive']) && operands(args).slice(1).some(isVitalPath)
      ? `recursive ${cmd} of ${operands(args).slice(1).find(isVitalPath)}`
      : undefined,
  ([cmd, sub, ...args]) => {
    if (cmd !== 'git') return undefined;
    if (sub === 'push') {
      if (args.some((a) => ['--force', '--force-with-lease', '--mirror', '--delete', '--prune'].includes(a) || a.startsWith('--force-with-lease=') || /^-[A-Za-z]*[fd][A-Za-z]*$/.test(a)))
        return 'force push or remote branch deletion';
      if (args.some((a) => /^\+./.test(a) || /^:[^/\s]/.test(a))) return 'force push or remote branch deletion';
    }
    if (sub === 'clean' && flagHas(args, 'f', ['--force']) && flagHas(args, 'x', []) && flagHas(args, 'd', [])) return 'git clean -fdx';
    return undefined;
  },
  ([cmd, sub, ...args]) => {
    if (cmd === 'terraform' || cmd === 'tofu') {
      if (sub === 'destroy' || (sub === 'apply' && args.some((a) => a === '-destroy' || a === '--destroy'))) return `${cmd} destroy`;
    }
    if (cmd === 'pulumi' && sub === 'destroy') return 'pulumi destroy';
    if ((cmd === 'kubectl' || cmd === 'oc') && sub === 'delete') return `${cmd} delete`;
    if (cmd === 'helm' && (sub === 'uninstall' || sub === 'delete')) return 'helm uninstall';
    return undefined;
  },
  ([cmd, ...args]) => {
    if (cmd && /^mkfs(?:\.\w+)?$/.test(cmd)) return 'mkfs';
    if (cmd === 'dd' && args.some((a) => /^of=\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)/.test(a))) return 'raw write to a disk device';
    if ((cmd === 'shred' || cmd === 'wipefs') && args.some((a) => a.startsWith('/dev/'))) return `${cmd} of a device`;
    return undefined;
  },
];

/** The name of the destructive thing this command does, if any. */
export function destructiveCommand(argv: readonly string[]): string | undefined {
  const plain = unwrap(argv).map((a, i) => (i === 0 ? a.replace(/^.*\//, '') : a));
  if (plain.length === 0) return undefined;
  for (const rule of rules) {
    const found = rule(plain);
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
