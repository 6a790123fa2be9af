// Every namespace of the `sdk` global, by name. A namespace is an object of
// functions (nested objects for sub-namespaces such as worker.secret); the
// CLI command of the same name calls the same functions. To add one (the
// cloud's webhook and worker), add its factory to `factories`.
import type { SdkContext } from '../../workspace/context.ts';
import { cirNamespace } from './cir.ts';
import { dispatchNamespace } from './dispatch.ts';
import { healthNamespace } from './health.ts';
import { ledgerNamespace } from './ledger.ts';
import { notifyNamespace } from './notify.ts';
import { pluginNamespace } from './plugin.ts';
import { ratchetNamespace } from './ratchet.ts';
import { sequenceNamespace } from './sequence.ts';
import { temporalNamespace } from './temporal.ts';
import { vaultNamespace } from './vault.ts';
import { webhookNamespace } from './webhook.ts';
import { workerNamespace } from './worker.ts';

/** What a script run gives the namespaces beyond the context: the signal that stops long calls. */
export interface SdkRuntime {
  signal: AbortSignal;
}

type Fn = (...args: never[]) => unknown;
export type Namespace = { [name: string]: Fn | Namespace };
type Factory = (ctx: SdkContext, runtime: SdkRuntime) => Namespace;

export const namespaceFactories = {
  cir: (ctx) => cirNamespace(ctx),
  vault: (ctx) => vaultNamespace(ctx),
  sequence: (ctx, rt) => sequenceNamespace(ctx, rt.signal),
  temporal: (ctx) => temporalNamespace(ctx),
  ledger: (ctx) => ledgerNamespace(ctx),
  notify: (ctx) => notifyNamespace(ctx),
  health: (ctx) => healthNamespace(ctx),
  ratchet: (ctx) => ratchetNamespace(ctx),
  plugin: (ctx) => pluginNamespace(ctx),
  dispatch: (ctx) => dispatchNamespace(ctx),
  webhook: (ctx) => webhookNamespace(ctx),
  worker: (ctx) => workerNamespace(ctx),
} satisfies Record<string, Factory>;

/** Every namespace flattened to `path → function` (e.g. "secret.set"). */
export function buildSdk(ctx: SdkContext, runtime: SdkRuntime): Record<string, Record<string, Fn>> {
  const out: Record<string, Record<string, Fn>> = {};
  for (const [name, factory] of Object.entries(namespaceFactories)) {
    const flat: Record<string, Fn> = {};
    const walk = (node: Namespace, prefix: string): void => {
      for (const [k, v] of Object.entries(node)) {
        if (typeof v === 'function') flat[prefix + k] = v;
        else walk(v, `${prefix}${k}.`);
      }
    };
    walk(factory(ctx, runtime), '');
    out[name] = flat;
  }
  return out;
}
