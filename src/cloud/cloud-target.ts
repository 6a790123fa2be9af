// Where the webhook and worker namespaces reach the cloud API: `api_url` of
// vigil.yml (default `server.base`; VIGIL_API_URL overrides), with the API
// key from the vault (scope `api`, key `api_key`). The script never sees the
// key: it is read here, inside the SDK call.
import { CloudError, type CloudClient, cloudClient } from './cloud-client.ts';
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import type { SdkContext } from '../workspace/context.ts';
import { VigilError } from '../errors/vigil-error.ts';
import { vaultGet } from '../vault/vault.ts';

export const apiKeyScope = 'api';
export const apiKeyName = 'api_key';

export function cloudApiUrl(ctx: SdkContext): string | undefined {
  const override = ctx.env.VIGIL_API_URL;
  if (override) return override;
  const config = loadWorkspaceConfig(ctx.projectRoot, ctx.env);
  return config.api_url ?? config.server?.base;
}

export function cloudTarget(ctx: SdkContext): CloudClient {
  const apiUrl = cloudApiUrl(ctx);
  if (!apiUrl) {
    throw new VigilError('CLOUD_UNAVAILABLE', `no cloud API configured: set "api_url" (or "server.base") in ${ctx.projectRoot}/vigil.yml`);
  }
  const key = vaultGet(apiKeyName, { scope: apiKeyScope }, ctx.env);
  if (!key) {
    throw new VigilError('CLOUD_UNAVAILABLE', `no API key in the vault: store one with "vigil vault set ${apiKeyName} --scope ${apiKeyScope}" (make it with "vigil api-key create" on the server)`);
  }
  return cloudClient(apiUrl, key);
}

/** A refusal of the cloud API as the SDK's error: bad input stays INVALID_ARGUMENT, a missing thing NOT_FOUND. */
export function asSdkError(error: unknown): unknown {
  if (!(error instanceof CloudError)) return error;
  const details = { server_code: error.code, status: error.status, ...error.details };
  if (error.code === 'UNREACHABLE' || error.code === 'BAD_REPLY') return new VigilError('CLOUD_UNAVAILABLE', error.message, details);
  if (error.code === 'INVALID') {
    const field = typeof error.details.field === 'string' ? error.details.field : 'request';
    return new VigilError('INVALID_ARGUMENT', `${field}: ${error.message}`, { field, ...details });
  }
  if (error.code === 'NOT_FOUND') return new VigilError('NOT_FOUND', error.message, details);
  return new VigilError('CLOUD_REFUSED', `${error.code}: ${error.message}`, details);
}

/** Runs one cloud call and turns its refusal into a VigilError. */
export async function cloudCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw asSdkError(error);
  }
}
