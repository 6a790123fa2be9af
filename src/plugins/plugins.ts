// Plugins (sdk.plugin, `vigil plugin list`, run-event hooks): plugins in .vigil/plugins/<name>/
// plugin.json and ~/.vigil/plugins: {name, version, hooks: {<event>:
// command}, tools: {<name>: {command, description, input_schema}}}.
// `firePluginHook` runs every plugin's hook for an event with the event as
// JSON on stdin; a failing hook is recorded in the ledger, never fatal.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SdkContext } from '../workspace/context.ts';
import { vigilHome } from '../home/home.ts';
import { appendLedger } from '../ledger/ledger.ts';
import { confined, parseFailure } from '../workspace/confine.ts';

export const pluginEvents = ['run.start', 'run.end', 'step.start', 'step.end', 'gate.open', 'budget.reached'] as const;

export interface PluginTool {
  command: string;
  description?: string;
  input_schema?: Record<string, unknown>;
}
export interface Plugin {
  name: string;
  version?: string;
  dir: string;
  hooks: Record<string, string>;
  tools: Record<string, PluginTool>;
}

function parse(dir: string): Plugin | string {
  const file = join(dir, 'plugin.json');
  let doc: Partial<Plugin>;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return `${file}: ${(error as NodeJS.ErrnoException).code ? (error as Error).message : parseFailure(error)}`;
  }
  if (typeof doc !== 'object' || doc === null) return `${file}: must be a JSON object`;
  if (typeof doc.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(doc.name)) return `${file}: name must be letters, digits, "_", "." or "-"`;
  const hooks = doc.hooks ?? {};
  for (const [event, cmd] of Object.entries(hooks)) {
    if (!(pluginEvents as readonly string[]).includes(event)) return `${file}: hooks.${event}: unknown event; events: ${pluginEvents.join(', ')}`;
    if (typeof cmd !== 'string' || !cmd) return `${file}: hooks.${event}: must be a command line`;
  }
  for (const [name, tool] of Object.entries(doc.tools ?? {})) {
    if (!tool || typeof tool.command !== 'string' || !tool.command) return `${file}: tools.${name}.command: required`;
  }
  return { name: doc.name, version: typeof doc.version === 'string' ? doc.version : undefined, dir, hooks, tools: doc.tools ?? {} };
}

/** Project plugins first; a user plugin of the same name is shadowed. */
export function loadPlugins(ctx: SdkContext): { plugins: Plugin[]; problems: string[] } {
  const plugins: Plugin[] = [];
  const problems: string[] = [];
  const roots: Array<[string, string, string]> = [
    [ctx.projectRoot, join('.vigil', 'plugins'), 'the project'],
    [vigilHome(ctx.env), 'plugins', 'the Vigil home'],
  ];
  for (const [base, sub, what] of roots) {
    const root = join(base, sub);
    if (!existsSync(root)) continue;
    for (const e of readdirSync(root, { withFileTypes: true })) {
      if (!e.isDirectory() || !existsSync(join(root, e.name, 'plugin.json'))) continue;
      // A plugin's folder and manifest are read and run from inside their root only (no symlink out).
      try {
        confined(base, join(sub, e.name, 'plugin.json'), `plugins.${e.name}`, what);
      } catch (error) {
        problems.push((error as Error).message);
        continue;
      }
      const p = parse(join(root, e.name));
      if (typeof p === 'string') problems.push(p);
      else if (!plugins.some((x) => x.name === p.name)) plugins.push(p);
    }
  }
  return { plugins, problems };
}

export function firePluginHook(ctx: SdkContext, event: (typeof pluginEvents)[number], payload: Record<string, unknown>): void {
  for (const p of loadPlugins(ctx).plugins) {
    const cmd = p.hooks[event];
    if (!cmd) continue;
    const r = spawnSync('sh', ['-c', cmd], { cwd: p.dir, input: JSON.stringify({ event, ...payload }), timeout: 30_000, env: ctx.env });
    if (r.status !== 0) appendLedger(ctx.projectRoot, 'plugin.hook_failed', { plugin: p.name, event, exit_code: r.status, error: r.error?.message ?? null });
  }
}
