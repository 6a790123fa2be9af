// `vigil mcp` (the tool extension over stdio) and `vigil tools` (its tool
// surface, printed without starting anything).
import type { CAC } from 'cac';
import { listedTools } from '../transport/mcp-tools.ts';
import { defineCommand, fail } from './command.ts';
import { listFlag, stringFlag, UsageError } from './options.ts';

interface McpFlags {
  state?: unknown;
  base?: unknown;
  token?: unknown;
}

interface ToolsFlags {
  json?: unknown;
}

export function registerMcpCommands(cli: CAC): void {
  defineCommand(cli, 'mcp', 'Serve the ai.vigil/monitors tool extension (MCP) over standard input and output')
    // No `type: [String]` here: with it cac turns a bare `--state` into the path "true".
    .option('--state <file>', 'Keep monitors, subscriptions, leases and observations in this SQLite file ("~" is home; default: in memory)')
    .option('--base <url>', 'Attach to a running server (its origin or /mp/v0 root) instead of opening a state file')
    .option('--token <token>', 'A token to read private or shared monitors as resources with (repeatable; tokens used or minted in the session count too)', { type: [String] })
    .example('vigil mcp --state ~/.vigil/monitors.db')
    .example('vigil mcp --base http://127.0.0.1:8130')
    .action(async (flags: McpFlags) => {
      const state = stringFlag('--state', flags.state);
      const base = stringFlag('--base', flags.base);
      if (state !== undefined && base !== undefined) throw new UsageError('mcp takes --state <file> or --base <url>, not both: a running server already owns its state file.');
      if (base !== undefined && !/^https?:\/\/[^\s/]+/.test(base)) throw new UsageError(`--base takes an http(s) URL; got "${base}".`);
      const tokens = listFlag(flags.token);
      // Loaded here so that `vigil tools` and `--help` never open a store.
      const { runMcpDoor } = await import('../transport/mcp-door.ts');
      try {
        await runMcpDoor({ state, base, tokens });
      } catch (error) {
        fail(new Error(`cannot start: ${(error as Error).message}`, { cause: error }));
      }
    });

  defineCommand(cli, 'tools', 'Print the tool surface of the ai.vigil/monitors extension without starting anything')
    .option('--json', 'Machine-readable output: {tools: [{name, description, inputSchema}]} as tools/list answers it')
    .example('vigil tools --json')
    .action((flags: ToolsFlags) => {
      const surface = listedTools();
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify({ tools: surface }, null, 2)}\n`);
        return;
      }
      process.stdout.write(
        `Tools of the ai.vigil/monitors extension ("vigil mcp"); * marks a required field.\nEvery tool also takes \`bearer\`: the token for the call, as HTTP takes it in "Authorization: Bearer".\n\n${surface.map(describeTool).join('\n')}`,
      );
    });
}

interface PropertySchema {
  type?: string | string[];
  items?: PropertySchema;
  pattern?: string;
  enum?: unknown[];
  format?: string;
  description?: string;
  anyOf?: PropertySchema[];
}

function describeTool(tool: ReturnType<typeof listedTools>[number]): string {
  const schema = tool.inputSchema as { properties?: Record<string, PropertySchema>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).filter(([name]) => name !== 'bearer');
  const width = Math.max(0, ...fields.map(([name]) => name.length + 1));
  const lines = [`${tool.name}`, `  ${tool.description}`];
  for (const [name, property] of fields) {
    const label = `${name}${required.has(name) ? '*' : ''}`.padEnd(width);
    const note = property.description ? `  ${property.description}` : '';
    lines.push(`    ${label}  ${typeText(property)}${note}`);
  }
  if (!schema.properties || (schema as { additionalProperties?: boolean }).additionalProperties !== false) {
    lines.push('    (other keys: an inline filter)');
  }
  return `${lines.join('\n')}\n`;
}

function typeText(property: PropertySchema): string {
  if (property.enum) return property.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (property.anyOf) return property.anyOf.map(typeText).join(' | ');
  if (property.pattern === '^[0-9]{1,15}$') return 'whole number';
  if (property.type === 'array') return property.items ? `list of ${typeText(property.items)}` : 'list';
  const types = Array.isArray(property.type) ? property.type : property.type ? [property.type] : ['any'];
  const text = types.join(' | ');
  return property.format ? `${text} (${property.format})` : text;
}
