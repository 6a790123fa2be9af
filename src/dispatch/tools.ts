// Dispatch (sdk.dispatch, `vigil dispatch`): tools offered by plugins
// ("plugin:<name>") and MCP servers ("mcp:<id>"), run as queued jobs.
// `send` queues and returns {id, status: "queued"}; the daemon (through
// runQueuedDispatchJobs) or `vigil dispatch send --wait` runs them. A tool is
// named by its bare name (first match: plugins, then MCP servers) or as
// "<source>/<tool>", e.g. "mcp:files/read_file".
import type { SdkContext } from '../workspace/context.ts';
import { invalid, VigilError } from '../errors/vigil-error.ts';
import { claimJob, type DispatchJob, enqueueJob, finishJob, getJob, queuedJobIds } from './jobs.ts';
import { McpServers, readMcpConfig } from '../mcp-servers/mcp-servers.ts';
import { loadPlugins } from '../plugins/plugins.ts';
import { OutputBytes } from '../text/output-bytes.ts';
import { createWatchdog, runSupervised } from '../recipes/process/process-group.ts';

export interface DispatchToolInfo {
  name: string;
  source: string;
  description?: string;
}

async function mcpTools(ctx: SdkContext): Promise<DispatchToolInfo[]> {
  const config = readMcpConfig(ctx.workspace);
  if (Object.keys(config).length === 0) return [];
  const servers = new McpServers(config, ctx.workspace, ctx.env);
  const out: DispatchToolInfo[] = [];
  try {
    for (const id of Object.keys(config)) {
      try {
        const listed = await servers.listTools(id);
        for (const t of listed) out.push({ name: t.name, source: `mcp:${id}`, ...(t.description ? { description: t.description } : {}) });
      } catch {
        // an unreachable server offers no tools
      }
    }
  } finally {
    await servers.closeAll();
  }
  return out;
}

function pluginTools(ctx: SdkContext): DispatchToolInfo[] {
  return loadPlugins(ctx).plugins.flatMap((p) =>
    Object.entries(p.tools).map(([name, t]) => ({ name, source: `plugin:${p.name}`, ...(t.description ? { description: t.description } : {}) })),
  );
}

async function resolveTool(ctx: SdkContext, tool: string): Promise<DispatchToolInfo> {
  if (typeof tool !== 'string' || !tool) throw invalid('tool', 'must be a tool name or "<source>/<tool>"');
  const slash = tool.indexOf('/');
  const [source, name] = slash > 0 && /^(plugin|mcp):/.test(tool) ? [tool.slice(0, slash), tool.slice(slash + 1)] : [null, tool];
  const plugins = pluginTools(ctx);
  const found = plugins.find((t) => t.name === name && (!source || t.source === source));
  if (found) return found;
  if (!source || source.startsWith('mcp:')) {
    const mcp = (await mcpTools(ctx)).find((t) => t.name === name && (!source || t.source === source));
    if (mcp) return mcp;
  }
  throw new VigilError('NOT_FOUND', `tool: no tool "${tool}" among plugins and MCP servers (see dispatch.list)`, { field: 'tool' });
}

export async function runDispatchJob(ctx: SdkContext, id: string): Promise<DispatchJob> {
  if (!claimJob(ctx.projectRoot, id)) {
    const job = getJob(ctx.projectRoot, id);
    if (!job) throw new VigilError('NOT_FOUND', `id: no dispatch job "${id}"`, { field: 'id' });
    return job;
  }
  const job = getJob(ctx.projectRoot, id)!;
  try {
    if (job.source.startsWith('plugin:')) {
      const plugin = loadPlugins(ctx).plugins.find((p) => `plugin:${p.name}` === job.source);
      const tool = plugin?.tools[job.tool];
      if (!plugin || !tool) throw new Error(`${job.source} no longer offers "${job.tool}"`);
      const r = await runTool(tool.command, plugin.dir, JSON.stringify(job.params), ctx.env);
      if (r.exitCode !== 0) throw new Error(`${r.why}: ${r.stderr.trim().slice(-2000)}`);
      const text = r.stdout.trim();
      let result: unknown = text;
      try {
        result = JSON.parse(text);
      } catch {
        // plain text result
      }
      finishJob(ctx.projectRoot, id, { result });
    } else {
      const servers = new McpServers(readMcpConfig(ctx.workspace), ctx.workspace, ctx.env);
      try {
        finishJob(ctx.projectRoot, id, { result: await servers.call(job.source.slice('mcp:'.length), job.tool, job.params) });
      } finally {
        await servers.closeAll();
      }
    }
  } catch (error) {
    finishJob(ctx.projectRoot, id, { error: (error as Error).message });
  }
  return getJob(ctx.projectRoot, id)!;
}

/** The longest a tool may run, and the most of its output kept. */
const toolLimitMs = 600_000;
const toolOutputBytes = 16 * 1024 * 1024;

/**
 * A plugin tool in a process group of its own, supervised as an agent is: killed past its time limit, and
 * with everything it started when its runner dies (even by SIGKILL), so no tool outlives a job read as
 * interrupted.
 */
async function runTool(command: string, cwd: string, input: string, env: NodeJS.ProcessEnv): Promise<{ exitCode: number | null; why: string; stdout: string; stderr: string }> {
  const out = { stdout: new OutputBytes(toolOutputBytes), stderr: new OutputBytes(toolOutputBytes) };
  const r = await runSupervised(
    {
      command: 'sh',
      args: ['-c', command],
      cwd,
      env,
      stdin: input,
      onOutput: (chunk, stream) => out[stream].add(chunk),
    },
    createWatchdog(toolLimitMs, toolLimitMs, new AbortController().signal),
  );
  const why = r.spawnError ?? (r.killedBy ? `stopped after ${toolLimitMs / 60_000} minutes` : `exit ${r.exitCode ?? r.signal}`);
  return { exitCode: r.spawnError || r.killedBy ? null : r.exitCode, why, stdout: out.stdout.text(), stderr: out.stderr.text() };
}

/** For the daemon: runs every queued job of the project, one at a time. */
export async function runQueuedDispatchJobs(ctx: SdkContext): Promise<number> {
  const ids = queuedJobIds(ctx.projectRoot);
  for (const id of ids) await runDispatchJob(ctx, id);
  return ids.length;
}

/** Queues a job for a tool; see the header for how a tool is named. */
export async function sendDispatchJob(ctx: SdkContext, tool: string, params?: Record<string, unknown>): Promise<{ id: string; status: string }> {
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params))) throw invalid('params', 'must be an object');
  const t = await resolveTool(ctx, tool);
  const job = enqueueJob(ctx.projectRoot, t.name, t.source, params ?? {});
  return { id: job.id, status: job.status };
}

export function dispatchJobStatus(ctx: SdkContext, id: string): DispatchJob {
  const job = typeof id === 'string' ? getJob(ctx.projectRoot, id) : null;
  if (!job) throw new VigilError('NOT_FOUND', `id: no dispatch job ${JSON.stringify(id)}`, { field: 'id' });
  return job;
}

/** Every tool offered: plugins' first, then MCP servers'. */
export async function dispatchTools(ctx: SdkContext): Promise<DispatchToolInfo[]> {
  return [...pluginTools(ctx), ...(await mcpTools(ctx))];
}
