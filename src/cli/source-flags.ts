// `vigil serve` flags of the live sources and the inspector (§18, §19):
// --sources, --source-root, --allow-shell-sources, --allow-private-sources
// and --inspect[=<port>].
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isLoopbackHost } from '../service/loopback.ts';
import { defaultSourceKinds, liveKinds } from '../sources/config.ts';
import { listFlag, stringFlag, UsageError, wholeNumberFlag } from './options.ts';

/** The Stately inspector relay's port when --inspect names none. */
export const defaultInspectPort = 8131;

export interface SourceFlags {
  sources?: unknown;
  sourceRoot?: unknown;
  allowShellSources?: unknown;
  allowPrivateSources?: unknown;
  inspect?: unknown;
  inspectHost?: unknown;
}

export function sourceOptions(flags: SourceFlags, adminEnabled: boolean) {
  const kinds = flags.sources === undefined ? [...defaultSourceKinds] : listFlag(flags.sources);
  for (const kind of kinds) {
    if (!(liveKinds as readonly string[]).includes(kind)) {
      throw new UsageError(`--sources takes a comma-separated list of ${liveKinds.join(', ')}; got "${kind}".`);
    }
  }
  if (kinds.includes('shell') && flags.allowShellSources !== true) {
    throw new UsageError('--sources shell needs --allow-shell-sources: shell sources run commands on this machine.');
  }
  const allowShell = flags.allowShellSources === true;
  if (allowShell && !adminEnabled) {
    throw new UsageError('--allow-shell-sources needs --allow-admin: only the admin token may create a shell source.');
  }
  const rootFlag = stringFlag('--source-root', flags.sourceRoot);
  const root = resolve(rootFlag ?? process.cwd());
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new UsageError(`--source-root must name an existing directory; "${rootFlag}" is not one.`);
  }
  const inspectPort =
    flags.inspect === undefined || flags.inspect === false
      ? undefined
      : flags.inspect === true || flags.inspect === ''
        ? defaultInspectPort
        : wholeNumberFlag('--inspect', flags.inspect, 0, 65535);
  const inspectHost = stringFlag('--inspect-host', flags.inspectHost);
  if (inspectHost !== undefined && inspectPort === undefined) throw new UsageError('--inspect-host needs --inspect: it says where the inspector listens.');
  if (inspectHost !== undefined && !isLoopbackHost(inspectHost) && !adminEnabled) {
    throw new UsageError(`--inspect-host ${inspectHost} listens beyond loopback, where the inspector needs a token: add --allow-admin (its token opens the inspector).`);
  }
  // Unset: the server decides by its listening address (private targets allowed on loopback only).
  const allowPrivate = flags.allowPrivateSources === true ? true : undefined;
  return { sources: { kinds, root, allowShell, allowPrivate }, inspectPort, inspectHost };
}

export const sourceFlagHelp = {
  sources: `Live source kinds the server runs (comma-separated from ${liveKinds.join(', ')}; default ${defaultSourceKinds.join(',')})`,
  sourceRoot: 'Directory that file and log source paths must lie under (default: the working directory)',
  allowShell: 'Run shell sources (needs --allow-admin; such monitors must be created with the admin token)',
  allowPrivate: 'Let http, feed and ws sources reach loopback, private and link-local addresses (default: only when --host is a loopback address)',
  inspect: `Stream every actor to the Stately inspector over WebSocket on this port (default ${defaultInspectPort}; off unless given)`,
  inspectHost: 'Where the inspector listens (default 127.0.0.1, whatever --host is); beyond loopback a client needs the admin token',
};
