// Sends the product events of this process (cir.capture, training.ingested,
// usage.limit_reached from src/events/channel.ts) to the cloud API's
// POST /v1/events when the project names a cloud API (VIGIL_API_URL,
// `api_url` of vigil.yml, or the server's base: VIGIL_BASE, `server.base`); the server fans them out to the registered webhooks.
// A failed forward never fails the command that emitted the event: it is
// reported on stderr.
import { onEvent, type VigilEvent } from '../events/channel.ts';

export interface ForwarderOptions {
  readonly workspace?: () => string;
  readonly env?: NodeJS.ProcessEnv;
  readonly warn?: (line: string) => void;
}

export function forwardProductEvents(options: ForwarderOptions = {}): () => void {
  const warn = options.warn ?? ((line: string) => process.stderr.write(`vigil: ${line}\n`));
  return onEvent('*', (event) => forward(event, options, warn));
}

async function forward(event: VigilEvent, options: ForwarderOptions, warn: (line: string) => void): Promise<void> {
  // Loaded on the first event: commands that emit none never read vigil.yml or the vault.
  const [{ sdkContext }, { vaultGet }, { cloudClient }, target] = await Promise.all([
    import('../workspace/context.ts'),
    import('../vault/vault.ts'),
    import('./cloud-client.ts'),
    import('./cloud-target.ts'),
  ]);
  const env = options.env ?? process.env;
  let apiUrl: string | undefined;
  let key: string | null = null;
  try {
    const ctx = sdkContext({ workspace: options.workspace?.() ?? process.cwd(), env });
    // Where sdk.webhook goes too: VIGIL_API_URL, api_url, then the server's base (docs/cloud.md).
    apiUrl = target.cloudApiUrl(ctx);
    if (!apiUrl) return;
    key = vaultGet(target.apiKeyName, { scope: target.apiKeyScope }, env);
  } catch (error) {
    warn(`${event.type} not sent to the cloud API: ${(error as Error).message}`);
    return;
  }
  if (!key) {
    warn(`${event.type} not sent to ${apiUrl}: no API key in the vault (vigil vault set ${target.apiKeyName} --scope ${target.apiKeyScope})`);
    return;
  }
  try {
    await cloudClient(apiUrl, key, 15_000).request('POST', '/events', event);
  } catch (error) {
    warn(`${event.type} not sent to ${apiUrl}: ${(error as Error).message}`);
  }
}
