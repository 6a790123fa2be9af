// `servers.<id>.call(tool, args)` for scripts: MCP servers configured in
// <workspace>/.mcp.json ({"mcpServers": {id: {command, args?, env?, cwd?} |
// {url, type?: "http"|"sse", headers?}}}), read once at start. Each server
// connects through the official MCP client at its first call; every
// connection is closed when the script ends.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { confined, parseFailure } from '../workspace/confine.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { packageVersion } from '../version.ts';
import { parseJson } from '../json/parse-json.ts';
import { invalid, VigilError } from '../errors/vigil-error.ts';

interface StdioEntry {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}
interface HttpEntry {
  url: string;
  type?: 'http' | 'sse' | 'streamable-http';
  headers?: Record<string, string>;
}
type Entry = StdioEntry | HttpEntry;

export function readMcpConfig(workspace: string): Record<string, Entry> {
  const file = join(workspace, '.mcp.json');
  if (!existsSync(file)) return {};
  confined(workspace, '.mcp.json', '.mcp.json');
  let doc: { mcpServers?: Record<string, Entry> };
  try {
    doc = parseJson(readFileSync(file, 'utf8')) as typeof doc;
  } catch (error) {
    throw invalid(file, `is ${parseFailure(error)}`);
  }
  const servers = (typeof doc === 'object' && doc !== null ? doc.mcpServers : undefined) ?? {};
  for (const [id, e] of Object.entries(servers)) {
    const ok = e && typeof e === 'object' && (typeof (e as StdioEntry).command === 'string' || typeof (e as HttpEntry).url === 'string');
    if (!ok) throw invalid(`${file}: mcpServers.${id}`, 'needs "command" (stdio) or "url" (HTTP)');
  }
  return servers;
}

export class McpServers {
  private readonly clients = new Map<string, Promise<Client>>();

  constructor(
    private readonly config: Record<string, Entry>,
    private readonly workspace: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  private connect(id: string): Promise<Client> {
    const entry = this.config[id];
    if (!entry) {
      const known = Object.keys(this.config);
      throw new VigilError('MCP_SERVER_UNKNOWN', `servers.${id}: no such server in ${join(this.workspace, '.mcp.json')}; configured: ${known.length ? known.join(', ') : 'none'}`, {
        id,
        configured: known,
      });
    }
    let pending = this.clients.get(id);
    if (!pending) {
      pending = (async () => {
        const client = new Client({ name: 'vigil-script', version: packageVersion });
        if ('command' in entry) {
          const env: Record<string, string> = {};
          for (const [k, v] of Object.entries(this.env)) if (v !== undefined) env[k] = v;
          await client.connect(
            new StdioClientTransport({
              command: entry.command,
              args: entry.args ?? [],
              env: { ...env, ...(entry.env ?? {}) },
              cwd: entry.cwd ? resolve(this.workspace, entry.cwd) : this.workspace,
              stderr: 'inherit',
            }),
          );
        } else {
          const url = new URL(entry.url);
          const init = { requestInit: { headers: entry.headers ?? {} } };
          await client.connect(entry.type === 'sse' ? new SSEClientTransport(url, init) : new StreamableHTTPClientTransport(url, init));
        }
        return client;
      })();
      this.clients.set(id, pending);
    }
    return pending;
  }

  async call(id: string, tool: string, args: unknown): Promise<unknown> {
    if (args !== null && (typeof args !== 'object' || Array.isArray(args))) throw invalid('args', 'must be an object of tool arguments');
    let client: Client;
    try {
      client = await this.connect(id);
    } catch (error) {
      if (error instanceof VigilError) throw error;
      this.clients.delete(id);
      throw new VigilError('MCP_CALL_FAILED', `servers.${id}: cannot connect: ${(error as Error).message}`, { id });
    }
    try {
      return await client.callTool({ name: tool, arguments: (args ?? {}) as Record<string, unknown> });
    } catch (error) {
      throw new VigilError('MCP_CALL_FAILED', `servers.${id}.call("${tool}"): ${(error as Error).message}`, { id, tool });
    }
  }

  async listTools(id: string): Promise<Array<{ name: string; description?: string }>> {
    const client = await this.connect(id);
    return (await client.listTools()).tools;
  }

  /** Names of servers that were actually started (for tests and logs). */
  connected(): string[] {
    return [...this.clients.keys()];
  }

  async closeAll(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(all.map(async (p) => (await p).close()));
  }
}
