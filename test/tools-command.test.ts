// `vigil tools`: the tool surface printed without starting anything, as
// plain JSON Schemas that any client can validate arguments with.
import { spawnSync } from 'node:child_process';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { repoRoot, vigilArgs } from './support/server-process.ts';
import { seedToolNames } from './support/seed-tools.ts';

function vigil(args: readonly string[]) {
  const result = spawnSync(process.execPath, vigilArgs(args), { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: string; properties: Record<string, unknown>; required?: string[] };
}

const json = vigil(['tools', '--json']);
const surface = JSON.parse(json.stdout) as { tools: Tool[] };
const schemaOf = (name: string) => surface.tools.find((t) => t.name === name)!.inputSchema;

describe('vigil tools --json', () => {
  it('prints the 13 tools of the seed with a description and an object schema each', () => {
    expect(json.status).toBe(0);
    expect(surface.tools.map((t) => t.name)).toEqual(seedToolNames);
    for (const tool of surface.tools) {
      expect(tool.description.length).toBeGreaterThan(10);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema.properties).toHaveProperty('bearer');
    }
  });

  it('publishes plain JSON Schema: no $ref and none of the validator keywords', () => {
    const text = JSON.stringify(surface);
    for (const keyword of ['"$ref"', '"vocabulary"', '"wholeNumber"', '"timestamp"', '"$id"']) expect(text).not.toContain(keyword);
    expect(schemaOf('monitor_publish').properties.tier).toEqual({
      type: 'string',
      enum: ['src', 'measured', 'derived', 'unverified', 'falsified'],
    });
    expect(schemaOf('monitor_publish').properties.time).toEqual({ type: 'string', format: 'date-time' });
    expect(schemaOf('monitor_configure').required).toEqual(['action', 'id', 'reason']);
  });

  it('accepts what the server accepts and refuses closed values outside their vocabulary', () => {
    const ajv = new Ajv({ strict: false, validateFormats: false, allowUnionTypes: true });
    const publish = ajv.compile(schemaOf('monitor_publish'));
    expect(publish({ id: 'mon-1', bearer: 't', type: 'build.failed', subject: 'job-1', tier: 'measured', tags: { env: 'ci' } })).toBe(true);
    expect(publish({ id: 'mon-1', type: 'build.failed', tier: 'gospel' })).toBe(false);
    expect(publish({ id: 'mon-1', type: 'build.failed', bogus: 1 })).toBe(false);
    const pull = ajv.compile(schemaOf('monitor_pull'));
    expect(pull({ subscription: 'sub-1', wait: '5', limit: 10, types: 'build.*' })).toBe(true);
    expect(pull({ subscription: 'sub-1', wait: 51 })).toBe(false);
    expect(pull({ subscription: 'sub-1', limit: 'ten' })).toBe(false);
    const subscribe = ajv.compile(schemaOf('monitor_subscribe'));
    expect(subscribe({ monitor: 'mon-1', subscriber: 'agent:a', from: 'head', capabilities: ['act'] })).toBe(true);
    expect(subscribe({ monitor: 'mon-1', subscriber: 'agent:a', capabilities: ['fly'] })).toBe(false);
  });
});

describe('vigil tools', () => {
  it('prints a human-readable list by default', () => {
    const { status, stdout } = vigil(['tools']);
    expect(status).toBe(0);
    for (const tool of surface.tools) expect(stdout).toContain(`\n${tool.name}\n`);
    expect(stdout).toMatch(/action\*\s+"update" \| "pause" \| "resume" \| "retire"/);
    expect(stdout).not.toMatch(/^\s*\{/);
  });

  it('has help, and exits 2 on a bad flag', () => {
    const help = vigil(['tools', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--json');
    const mcpHelp = vigil(['mcp', '--help']);
    expect(mcpHelp.stdout).toContain('--state <file>');
    const bad = vigil(['tools', '--jsno']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--jsno');
    expect(vigil(['mcp', '--state']).status).toBe(2);
  });
});
