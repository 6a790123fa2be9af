// What the guard knows about programs by name, apart from the rules and the
// wrappers: SQL clients (the only place it looks for SQL, so that `echo` of
// prose about DROP TABLE is not an intent), programs that never run their
// arguments, and — for a program it does not know — the command lines in
// its arguments it may run (`frob --fast rm -rf /`), read as commands whose
// effect it cannot tell.
import { isWrapper } from './wrappers.ts';

const base = (cmd: string) => cmd.replace(/^.*\//, '');

const sqlClients = new Set([
  'psql', 'pgcli', 'mysql', 'mariadb', 'mycli', 'sqlite3', 'sqlite', 'litecli', 'duckdb', 'sqlcmd', 'osql', 'isql', 'sqlplus', 'sql', 'usql',
  'clickhouse', 'clickhouse-client', 'cockroach', 'snowsql', 'bq', 'trino', 'presto', 'spark-sql', 'hive', 'beeline', 'impala-shell', 'cqlsh', 'vsql', 'mssql-cli', 'dolt',
]);

/** A program that runs the SQL in its arguments or its input. */
export function isSqlClient(name: string): boolean {
  return sqlClients.has(base(name));
}

// Programs a destructive command line may start with: what the rules judge, shells, interpreters, SQL clients.
const dangerous = /^(?:rm|unlink|shred|find|chmod|chown|chgrp|rimraf|del-cli|mv|rsync|git|terraform|tofu|pulumi|kubectl|oc|helm|dropdb|gh|aws|dd|wipefs|mkfs(?:\.\w+)?|tar|zip|7z|7za|7zr|awk|gawk|mawk|nawk|sed|gsed|eval|(?:ba|da|z|k|mk|a|fi|y|c|tc)?sh|python(?:[23](?:\.\d+)?)?|pypy3?|node|nodejs|bun|deno|perl|ruby|php)$/;

// Programs whose arguments are never a command they run (or whose own rules read them).
const neverRuns = new Set([
  'echo', 'printf', 'print', 'cat', 'tac', 'less', 'more', 'head', 'tail', 'wc', 'sort', 'uniq', 'cut', 'tr', 'paste', 'join', 'column', 'fold', 'fmt', 'nl', 'od', 'xxd', 'hexdump', 'strings',
  'grep', 'egrep', 'fgrep', 'rg', 'ag', 'ack', 'jq', 'yq', 'ls', 'll', 'dir', 'tree', 'touch', 'mkdir', 'rmdir', 'cp', 'ln', 'install', 'stat', 'file', 'du', 'df', 'basename', 'dirname', 'realpath', 'readlink',
  'which', 'type', 'whereis', 'whatis', 'man', 'help', 'info', 'apropos', 'test', '[', '[[', 'true', 'false', ':', 'export', 'local', 'declare', 'typeset', 'readonly', 'alias', 'unalias', 'hash', 'set', 'unset', 'shift', 'read',
  'logger', 'notify-send', 'wall', 'write', 'tee', 'date', 'sleep', 'kill', 'pkill', 'ps', 'diff', 'cmp', 'comm', 'patch', 'curl', 'wget', 'scp', 'sftp', 'base64', 'md5sum', 'sha1sum', 'sha256sum', 'gzip', 'gunzip', 'xz', 'unzip', 'zcat',
  'make', 'npm', 'yarn', 'pnpm', 'pip', 'pip3', 'cargo', 'go', 'mvn', 'gradle', 'docker', 'podman', 'vigil', 'code', 'vim', 'vi', 'nano', 'emacs', 'open', 'xdg-open',
  'rm', 'unlink', 'shred', 'find', 'chmod', 'chown', 'chgrp', 'rimraf', 'del-cli', 'mv', 'rsync', 'git', 'terraform', 'tofu', 'pulumi', 'kubectl', 'oc', 'helm', 'dropdb', 'gh', 'aws', 'dd', 'wipefs', 'tar', 'zip', '7z', '7za', '7zr',
  'awk', 'gawk', 'mawk', 'nawk', 'sed', 'gsed', 'ssh', 'su', 'eval', 'trap', 'source', '.', 'xargs',
]);

/**
 * For a program the guard does not know, each tail of its arguments that starts with a program a destructive
 * command may start with: `frob --fast rm -rf /` gives `rm -rf /`.
 */
export function guessedCommands(argv: readonly string[]): string[][] {
  const [cmd] = argv;
  if (cmd === undefined || neverRuns.has(cmd) || isWrapper(cmd) || isSqlClient(cmd) || dangerous.test(cmd) || cmd.includes('\u0000')) return [];
  const tails: string[][] = [];
  for (let k = 1; k < argv.length && tails.length < 4; k += 1) if (dangerous.test(base(argv[k]!)) && argv[k]!.length > 0) tails.push(argv.slice(k));
  return tails;
}
