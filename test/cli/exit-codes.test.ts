// One CLI error table (issue 48 point 5): every error maps to its exit code in
// one place, a server that does not answer is 3 from every command that talks
// to one, and every command's help has one shape, with the table in it and in
// the README.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CloudError } from '../../src/cloud/cloud-client.ts';
import { ExitCode, exitCodeOf, exitCodes } from '../../src/errors/exit-codes.ts';
import { VigilError } from '../../src/errors/vigil-error.ts';
import { prepareHelp } from '../../src/cli/command.ts';
import { UsageError } from '../../src/cli/options.ts';
import { vigilProgram } from '../../src/cli/program.ts';
import { RecipeInputError, RunRefusedError } from '../../src/recipes/errors.ts';
import { recipeTypeDefs } from '../../src/recipes/types/registry.ts';
import { UnreachableError } from '../../src/server-client/server-client.ts';
import { TemporalTimeoutError } from '../../src/triggers/temporal-api.ts';
import { makeSdkProject, repoRoot, type SdkProject, vigil } from '../sdk/helpers.ts';
import { stablePort } from '../support/server-process.ts';

describe('the exit code of an error', () => {
  it('comes from the one table, by the error\'s kind', () => {
    const cases: [unknown, number][] = [
      [new UsageError('--port takes a whole number'), 2],
      [new RecipeInputError('invalid recipe'), 2],
      [Object.assign(new Error('Unknown option `--nope`'), { name: 'CACError' }), 2],
      [new VigilError('INVALID_ARGUMENT', 'name: must be text'), 2],
      [new RunRefusedError('requires not met'), 1],
      [new VigilError('NOT_FOUND', 'no such run'), 1],
      [new VigilError('CLOUD_UNAVAILABLE', 'no cloud API configured'), 1],
      [new VigilError('CLOUD_UNAVAILABLE', 'cannot reach the cloud API', { server_code: 'UNREACHABLE' }), 3],
      [new UnreachableError('cannot reach http://127.0.0.1:1/mp/v0'), 3],
      [new CloudError('UNREACHABLE', 'cannot reach the cloud API', 0), 3],
      [new CloudError('UNAUTHORIZED', 'bad key', 401), 1],
      [new TemporalTimeoutError('fire passed 600000 ms'), 124],
      [new VigilError('TIMEOUT', 'sequence ran too long'), 124],
      [new Error('anything else'), 1],
      ['a thrown string', 1],
    ];
    for (const [error, code] of cases) expect(exitCodeOf(error), String((error as Error).message ?? error)).toBe(code);
  });

  it('is one of the codes the README lists, with the same meanings', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => ({ code: Number(m[1]), meaning: m[2] }));
    expect(rows).toEqual(exitCodes.map((e) => ({ code: e.code, meaning: e.meaning })));
    expect(Object.values(ExitCode).sort((a, b) => a - b)).toEqual(exitCodes.map((e) => e.code));
  });
});

describe('a server that does not answer', { timeout: 120_000 }, () => {
  let project: SdkProject;
  let nowhere: string;
  beforeAll(async () => {
    project = makeSdkProject();
    nowhere = `http://127.0.0.1:${await stablePort()}`;
  });
  afterAll(() => project?.cleanup());

  it('is exit 3 from every command that talks to one', async () => {
    // The cloud commands read their API key from the vault first: give them one.
    expect((await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: 'vk_not-a-real-key' })).code).toBe(0);
    const commands = [
      ['publish', 'builds', '--token', 'vgo_x', '--type', 'ci.build.finished', '--base', nowhere],
      ['watch', '--subscription', 'sub-x', '--token', 'vgs_x', '--retry-for', '0', '--base', nowhere],
      ['conform', '--base', nowhere],
      ['api-key', 'list', '--admin-token', 'vga_x', '--base', nowhere],
      ['webhook', 'list', '--base', nowhere],
      ['worker', 'list', '--base', nowhere],
    ];
    const results = await Promise.all(commands.map((args) => vigil(project, args)));
    results.forEach((r, i) => {
      expect({ command: commands[i]![0], code: r.code }, r.stderr).toEqual({ command: commands[i]![0], code: 3 });
      expect(r.stderr, commands[i]![0]).toMatch(/cannot reach/);
    });
  });
});

describe('the help of every command', () => {
  /** What `vigil <command> --help` prints, read in-process from the program main.ts parses with. */
  async function helps(): Promise<{ global: string; commands: Map<string, string> }> {
    const cli = vigilProgram();
    await prepareHelp();
    const printed: string[] = [];
    const spy = vi.spyOn(console, 'info').mockImplementation((text: string) => void printed.push(text));
    try {
      const read = (command: { outputHelp(): void }) => {
        command.outputHelp();
        return printed.pop()!;
      };
      return { global: read(cli.globalCommand), commands: new Map(cli.commands.map((c) => [c.name, read(c)])) };
    } finally {
      spy.mockRestore();
    }
  }

  it('has one shape: usage, summary, options, examples as typed, and the exit codes', async () => {
    const { global, commands } = await helps();
    expect(commands.size).toBeGreaterThan(20);
    const table = exitCodes.map((e) => `  ${String(e.code).padEnd(3)}  ${e.meaning}`).join('\n');
    expect(global.endsWith(`Exit codes:\n${table}`)).toBe(true);
    for (const [name, help] of commands) {
      // The summary the command list shows stands under the usage line.
      const summary = new RegExp(`^ {2}${name}\\b.*?  (\\S.*)$`, 'm').exec(global)![1]!;
      expect(help, name).toContain(`Usage:\n  $ vigil ${name}`);
      expect(help.split('\n\n')[2], name).toBe(`  ${summary}`);
      expect(help.endsWith(`Exit codes:\n${table}`), name).toBe(true);
      const examples = /Examples:\n([\s\S]*?)\n\n/.exec(help)?.[1];
      if (examples) for (const line of examples.split('\n')) expect(line, name).toMatch(/^ {2}\$ \S/);
      expect(help, name).not.toMatch(/ +$/m);
      // A --no-x flag does not carry cac's "(default: true)", which is x's default and reads as its own.
      expect(help, name).not.toMatch(/^ +--no-.*\(default: true\)$/m);
    }
    expect(commands.get('daemon')).toMatch(/^ {2}--no-publish +Do not publish firings and reactions to the server of vigil\.yml$/m);
  });

  it('of vigil sequence lists the runnable types from their registry', async () => {
    const runnable = recipeTypeDefs().filter((d) => d.planner || d.composite).map((d) => d.type);
    expect(runnable).toContain('substrate');
    const { global, commands } = await helps();
    expect(commands.get('sequence')).toContain(`\n  Run a recipe of any runnable type: ${runnable.join(', ')}\n`);
    expect(global).toMatch(new RegExp(`sequence <name> +Run a recipe of any runnable type: ${runnable.join(', ')}\n`));
  });

  it('is what `vigil <command> --help` prints, exit 0', async () => {
    const project = makeSdkProject();
    try {
      const { commands } = await helps();
      const printed = await vigil(project, ['sequence', '--help']);
      expect(printed.code).toBe(0);
      expect(printed.stdout).toBe(`${commands.get('sequence')}\n`);
    } finally {
      project.cleanup();
    }
  }, 60_000);
});
