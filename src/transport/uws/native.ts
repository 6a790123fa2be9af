// Loading uWebSockets.js: the native binary for this Node, never the package's slow JS shim.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';

export type UwsModule = typeof Uws;
export type UwsProbe = { ok: true; uws: UwsModule } | { ok: false; reason: string };

const require = createRequire(import.meta.url);
let cachedProbe: UwsProbe | undefined;

/**
 * Loads the native uWS module. The package never fails to load: without a
 * binary for this Node ABI it warns and returns a slow pure-JS shim, so we
 * look for the binary ourselves and check the package handed us that binary.
 */
export function probeUws(abi: string = process.versions.modules): UwsProbe {
  if (abi === process.versions.modules && cachedProbe) return cachedProbe;
  const probe = loadNativeUws(abi);
  if (abi === process.versions.modules) cachedProbe = probe;
  return probe;
}

function loadNativeUws(abi: string): UwsProbe {
  const runtime = `Node ${process.version} (ABI ${abi}, ${process.platform}-${process.arch})`;
  if (/^(1|true)$/i.test(process.env.UWS_USE_FALLBACK ?? '')) {
    return { ok: false, reason: 'UWS_USE_FALLBACK is set, so uWebSockets.js would run its slow JS shim' };
  }
  try {
    const packageMain = require.resolve('uWebSockets.js');
    const binary = join(dirname(packageMain), '..', 'binaries', `uws_${process.platform}_${process.arch}_${abi}.node`);
    if (!existsSync(binary)) {
      return { ok: false, reason: `uWebSockets.js has no native binary for ${runtime}; it supports Node 16, 18 and 20` };
    }
    // uWS reads this when it loads. Its default (4 KB) closes a connection whose headers
    // arrive in pieces past that size without a reply; 16 KB matches node:http.
    process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';
    const uws = require('uWebSockets.js') as UwsModule;
    if (uws !== require(binary)) {
      return { ok: false, reason: `uWebSockets.js loaded its JS shim instead of the native binary on ${runtime}` };
    }
    return { ok: true, uws };
  } catch (error) {
    return { ok: false, reason: `uWebSockets.js failed to load on ${runtime}: ${(error as Error).message}` };
  }
}
