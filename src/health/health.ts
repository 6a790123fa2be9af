// Health (sdk.health, `vigil health`): is each part of Vigil usable here?
// {ok, components: {store, cir, vault, daemon, server, backends: {…}}}, each
// {ok, detail}. `ok` is the project's own parts (store, cir, vault); the
// daemon, server and backends are reported but optional.
import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import { openCir } from '../cir/open.ts';
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { claudeAuthStatus, codexAuthStatus } from '../recipes/preflight/agent-auth.ts';
import { findOnPath } from '../paths/which.ts';
import { fetchTextWithin } from '../net/fetch-within.ts';
import { daemonHolder } from '../triggers/daemon-lock.ts';
import type { SdkContext } from '../workspace/context.ts';
import { vaultBackend, vaultList } from '../vault/vault.ts';

export interface ComponentHealth {
  ok: boolean;
  detail: string;
}

export interface HealthReport {
  ok: boolean;
  components: {
    store: ComponentHealth;
    cir: ComponentHealth;
    vault: ComponentHealth;
    daemon: ComponentHealth;
    server: ComponentHealth;
    backends: Record<string, ComponentHealth>;
  };
}

function probe(work: () => string): ComponentHealth {
  try {
    return { ok: true, detail: work() };
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
}

async function serverHealth(ctx: SdkContext): Promise<ComponentHealth> {
  let base: string | undefined;
  try {
    base = loadWorkspaceConfig(ctx.projectRoot).server?.base;
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
  if (!base) return { ok: true, detail: 'no server configured in vigil.yml' };
  // A Vigil server answers its discover document (protocol.md §2); any other answer is not one.
  const root = base.replace(/\/+$/, '').replace(/\/discover$/, '').replace(/\/mp\/v0$/, '');
  const url = `${root}/mp/v0/discover`;
  const started = Date.now();
  try {
    const { response: res, text } = await fetchTextWithin(url, {}, 3000);
    const ms = Date.now() - started;
    if (res.status !== 200) return { ok: false, detail: `${url} answered HTTP ${res.status}: not a Vigil server at ${base} (check server.base in vigil.yml)` };
    type Discover = { protocol?: unknown; serverInfo?: { name?: unknown; version?: unknown } };
    let doc: Discover | null = null;
    try {
      doc = JSON.parse(text) as Discover;
    } catch {
      // not JSON: said below
    }
    if (doc === null || doc.protocol !== 'monitor-protocol') return { ok: false, detail: `${url} answered, but not with a monitor-protocol discover document: not a Vigil server` };
    const who = [doc.serverInfo?.name, doc.serverInfo?.version].filter((v) => typeof v === 'string').join(' ') || 'a monitor-protocol server';
    return { ok: true, detail: `${who} at ${root} (discover answered in ${ms} ms)` };
  } catch (error) {
    return { ok: false, detail: `${base}: ${(error as Error).message}` };
  }
}

function daemonHealth(ctx: SdkContext): ComponentHealth {
  const holder = daemonHolder(ctx.projectRoot);
  return holder ? { ok: true, detail: `daemon pid ${holder.pid} on ${holder.host}` } : { ok: false, detail: 'no daemon running for this project (vigil daemon)' };
}

export async function checkHealth(ctx: SdkContext): Promise<HealthReport> {
  const store = probe(() => {
    const dir = join(ctx.projectRoot, '.vigil');
    if (!existsSync(dir)) return `${dir} does not exist yet (created on first use)`;
    accessSync(dir, constants.W_OK);
    return `${dir} writable`;
  });
  const cir = probe(() => {
    const s = openCir(ctx.projectRoot, { env: ctx.env }).stats();
    return `${s.signals} signals, ${s.database_size_bytes} bytes`;
  });
  const vault = probe(() => `${vaultBackend(ctx.env)} backend, ${vaultList({}, ctx.env).length} keys`);
  const backends: Record<string, ComponentHealth> = {};
  const agents = await Promise.all(
    (['claude', 'codex'] as const).map(async (name): Promise<[string, ComponentHealth]> => {
      const path = findOnPath(name, ctx.env.PATH);
      if (!path) return [name, { ok: false, detail: `${name} not on PATH` }];
      // On PATH is not usable: ask the CLI whether it has credentials.
      const auth = await (name === 'claude' ? claudeAuthStatus : codexAuthStatus)(path, ctx.env);
      return [name, { ok: auth.loggedIn !== false, detail: `${path}: ${auth.detail}` }];
    }),
  );
  for (const [name, health] of agents) backends[name] = health;
  try {
    for (const [name, p] of Object.entries(loadWorkspaceConfig(ctx.projectRoot).providers ?? {})) {
      backends[name] = { ok: true, detail: `${p.type} provider${p.base_url ? ` at ${p.base_url}` : ''}` };
    }
  } catch {
    // reported by the server component
  }
  const components = { store, cir, vault, daemon: daemonHealth(ctx), server: await serverHealth(ctx), backends };
  return { ok: store.ok && cir.ok && vault.ok, components };
}
