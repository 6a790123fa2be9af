// `vigil script run <name>`: runs a script in the sandbox (src/sdk/script).
import type { CAC } from 'cac';
import { applyBaseFlag, baseHelp } from './base-flag.ts';
import { UsageError, wholeNumberFlag } from './options.ts';
import { defineCommand } from './command.ts';
import { runSdkCommand } from './sdk-command.ts';

function parseVars(value: unknown): Record<string, string> {
  const list = value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String);
  const vars: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    const name = eq > 0 ? item.slice(0, eq) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--var takes NAME=value with NAME letters, digits and "_"; got "${item}"`);
    vars[name] = item.slice(eq + 1);
  }
  return vars;
}

export function registerScriptCommands(cli: CAC): void {
  defineCommand(cli, 'script <action> <name>', 'Scripts: "run NAME" runs .vigil/scripts/NAME.{ts,mjs,js} (or ~/.vigil/scripts, or a path) with the sdk global')
    .option('--var <NAME=value>', 'A variable for sdk.vars (repeatable)', { type: [String] })
    .option('--workspace <path>', 'Workspace of the script (default: the current directory)')
    .option('--base <url>', `${baseHelp}: for the sdk calls that reach a server`, { type: [String] })
    .option('--timeout <seconds>', 'Stop the script after this many seconds, exit 124 (default 600)')
    .option('--memory <MB>', 'Heap limit of the script sandbox in MB (default 128)')
    .example('vigil script run triage --var ISSUE=42 --timeout 120')
    .action((action: string, name: string, options: Record<string, unknown>) =>
      runSdkCommand(async () => {
        if (action !== 'run') throw new UsageError(`script: unknown action "${action}"; actions: run`);
        applyBaseFlag(options.base);
        const { runScript } = await import('../sdk/script/run-script.ts');
        const code = await runScript(
          {
            name: String(name),
            vars: parseVars(options.var),
            workspace: options.workspace === undefined ? '.' : String(options.workspace),
            cwd: process.cwd(),
            env: process.env,
            timeoutSeconds: options.timeout === undefined ? 600 : wholeNumberFlag('--timeout', options.timeout, 1, 86_400),
            memoryMb: options.memory === undefined ? 128 : wholeNumberFlag('--memory', options.memory, 16, 4096),
          },
          { stdout: process.stdout, stderr: process.stderr },
        );
        process.exitCode = code;
        // Exit naturally (an isolate killed at its memory limit is still being
        // torn down; process.exit now can crash), but never hang on a handle a
        // misbehaving MCP server left open.
        setTimeout(() => process.exit(code), 2000).unref();
      }),
    );
}
