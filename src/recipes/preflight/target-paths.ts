// Whether a path a command deletes (or moves, or chmods) is vital: `/`, a
// home folder, a top-level system folder, or everything inside one of them —
// after `..` is resolved, relative paths are joined to the folder the command
// runs in (`cd ~ && find . -delete`), and globs are matched against those
// folders (`/u?r`, `/us*`). A path the guard cannot place before running
// (built from a command's output, relative to an unknown folder, or above the
// workspace) is "unknown": refused as "cannot tell".
import { HOME, joinPath, UNKNOWN } from './shell-commands.ts';

export type TargetVerdict = 'vital' | 'unknown' | 'safe';

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

export function classifyTarget(target: string, cwd: string): TargetVerdict {
  const t = target.trim().replace(/^\$\{HOME\}/, HOME).replace(/^~(?=\/|$)/, HOME);
  if (t === '') return 'safe';
  if (t.startsWith(UNKNOWN)) return 'unknown';
  const full = joinPath(cwd, t);
  if (full.startsWith(UNKNOWN)) return 'unknown';
  if (full === '..' || full.startsWith('../')) return 'unknown';
  if (full.startsWith(`${HOME}/..`)) return 'vital';
  if (full.startsWith(HOME)) {
    const [first] = full.slice(HOME.length).split('/').filter(Boolean);
    if (first === undefined || everything(first)) return 'vital';
    return first.includes(UNKNOWN) ? 'unknown' : 'safe';
  }
  if (!full.startsWith('/')) return 'safe';
  const [first, second] = full.split('/').filter(Boolean);
  if (first === undefined || everything(first)) return 'vital';
  if (first.includes(UNKNOWN)) return 'unknown';
  if (!matchesSystemDir(first)) return 'safe';
  if (second === undefined || everything(second)) return 'vital';
  return second.includes(UNKNOWN) ? 'unknown' : 'safe';
}
