// Whether a path a command deletes (or moves, or chmods) is vital: `/`, a
// home folder, a top-level system folder, or everything inside one of them —
// after `..` is resolved, relative paths are joined to the folder the command
// runs in (`cd ~ && find . -delete`), and globs are matched against those
// folders (`/u?r`, `/us*`). Inside home, how much is vital depends on what
// the command does (`TargetUse`): deleting a folder of home (`~/.ssh`,
// `~/projects`; not a cache such as `~/.cache`) or anything in a folder of
// keys (`~/.ssh/id_ed25519`, `~/.aws/…`) is; changing modes there is not. A
// path the guard cannot place before running (built from a command's output,
// relative to an unknown folder, or above the workspace) is "unknown":
// refused as "cannot tell". A home folder written as a path is home too: the
// user's own (the value of $HOME, which a variable from outside substitutes
// into a `run:` line) and any `/home/<user>` or `/Users/<user>`.
import { userInfo } from 'node:os';
import { HOME, joinPath, UNKNOWN } from './shell-commands.ts';

export type TargetVerdict = 'vital' | 'unknown' | 'safe';

/**
 * What the command does to the target: `delete` a tree (rm -r, a move away, rsync --delete, an archive that
 * removes what it takes): home, its folders and anything holding keys are vital; `find` deletes what matches
 * under it: home and the folders of keys; `file`: one file: only keys; `change` (chmod -R): home itself.
 */
export type TargetUse = 'delete' | 'find' | 'file' | 'change';

// Folders of home a tree delete may take: caches and scratch, made again on demand.
const disposable = new Set(['.cache', '.tmp', 'tmp', '.npm', '.yarn', '.pnpm-store', '.node-gyp']);
// Where keys, tokens and credentials live: nothing in them is disposable.
const keyFolders = ['.ssh', '.gnupg', '.aws', '.azure', '.kube', '.docker', '.password-store', '.config/gcloud', '.config/gh', '.netrc', '.git-credentials', '.pgpass', '.npmrc', '.pypirc'];

const systemDirs = ['bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'media', 'mnt', 'opt', 'proc', 'root', 'sbin', 'srv', 'sys', 'usr', 'var', 'Users', 'System', 'Library', 'Applications', 'Volumes', 'private', 'snap', 'nix'];

const isGlob = (s: string) => /[*?[]/.test(s);
/** A component that is only wildcards and dots: `*`, `.*`, `?*`, `.??*`, `[!.]*`. */
const everything = (s: string) => isGlob(s) && /^[*?.[\]!^]+$/.test(s);

function globRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/^[!^]/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const matchesSystemDir = (component: string) => {
  if (!isGlob(component)) return systemDirs.includes(component);
  const re = globRegex(component);
  return systemDirs.some((d) => re.test(d));
};

export function classifyTarget(target: string, cwd: string, use: TargetUse = 'delete'): TargetVerdict {
  const t = target.trim().replace(/^\$\{HOME\}/, HOME).replace(/^~(?=\/|$)/, HOME);
  if (t === '') return 'safe';
  if (t.startsWith(UNKNOWN)) return 'unknown';
  const full = asHome(joinPath(cwd, t));
  if (full.startsWith(UNKNOWN)) return 'unknown';
  if (full === '..' || full.startsWith('../')) return 'unknown';
  if (full.startsWith(`${HOME}/..`)) return 'vital';
  if (full.startsWith(HOME)) {
    const parts = full.slice(HOME.length).split('/').filter(Boolean);
    const [first] = parts;
    if (first === undefined || everything(first)) return 'vital';
    if (first.includes(UNKNOWN)) return 'unknown';
    if (use === 'change') return 'safe';
    const within = parts.join('/');
    if (keyFolders.some((k) => matchesPath(k, parts))) return 'vital';
    if (use === 'delete' && parts.length === 1 && !disposable.has(first)) return 'vital';
    return within.includes(UNKNOWN) && keyFolders.some((k) => k.startsWith(first)) ? 'unknown' : 'safe';
  }
  if (!full.startsWith('/')) return 'safe';
  if (use === 'file') return 'safe';
  const [first, second] = full.split('/').filter(Boolean);
  if (first === undefined || everything(first)) return 'vital';
  if (first.includes(UNKNOWN)) return 'unknown';
  if (!matchesSystemDir(first)) return 'safe';
  if (second === undefined || everything(second)) return 'vital';
  return second.includes(UNKNOWN) ? 'unknown' : 'safe';
}

let account: string | undefined;
/** The account's home folder from the user database (os.homedir() would answer $HOME); '' when it has no entry. */
function accountHome(): string {
  if (account === undefined) {
    try {
      account = userInfo().homedir;
    } catch {
      account = '';
    }
  }
  return account;
}

/** The user's home folders as paths: $HOME's value and the account's; never `/` (a container's HOME may be). */
function homePaths(): string[] {
  return [process.env.HOME ?? '', accountHome()].map((h) => h.replace(/\/+$/, '')).filter((h) => h.startsWith('/'));
}

/** An absolute path in a home folder, written under HOME (`/home/alice/.ssh` → `$HOME/.ssh`), so that home's rules hold for it. */
function asHome(path: string): string {
  if (!path.startsWith('/')) return path;
  for (const home of homePaths()) if (path === home || path.startsWith(`${home}/`)) return HOME + path.slice(home.length);
  const other = /^\/(home|Users)\/([^/]+)(\/.*)?$/.exec(path);
  // `/home/*` stays a path: everything inside a system folder, vital by that rule.
  return other && !everything(other[2]!) ? HOME + (other[3] ?? '') : path;
}

/** Whether the path (components under home) is the key folder `k` or inside it; glob components match too. */
function matchesPath(k: string, parts: readonly string[]): boolean {
  const want = k.split('/');
  if (parts.length < want.length) return false;
  return want.every((w, i) => {
    const p = parts[i]!;
    return isGlob(p) ? globRegex(p).test(w) : p === w;
  });
}
