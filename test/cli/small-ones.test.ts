// Issue 31 point 9: the small things a new user trips over in the first hour,
// each through the real CLI or a real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { call } from '../support/client.ts';
import { startServerProcess } from '../support/server-process.ts';

let project: SdkProject;
beforeAll(() => {
  project = makeSdkProject();
});
afterAll(() => project.cleanup());

describe('the small ones', { timeout: 120_000 }, () => {
  it('publish --data that is JSON but not an object is a usage error (exit 2) that says an object is needed', async () => {
    for (const [data, kind] of [
      ['[1]', 'an array'],
      ['"text"', 'a string'],
      ['null', 'null'],
    ] as const) {
      const r = await vigil(project, ['publish', 'builds', '--token', 'vgo_x', '--type', 'demo', '--data', data]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(`vigil: --data must be a JSON object ({"key": value}); got ${kind}.\n`);
    }
  });

  it('a mistyped flag gets "did you mean", with the flag named as typed', async () => {
    const vars = await vigil(project, ['sequence', 'anything', '--vars', 'A=1']);
    expect(vars.code).toBe(2);
    expect(vars.stderr).toBe('vigil: Unknown option `--vars`; did you mean --var?\n');
    const catchup = await vigil(project, ['watch', '--catchup']);
    expect(catchup.stderr).toBe('vigil: Unknown option `--catchup`; did you mean --catch-up?\n');
    const kebab = await vigil(project, ['serve', '--catch-up']);
    expect(kebab.stderr).toBe('vigil: Unknown option `--catch-up`\n');
    // Two letters swapped are one slip, as one letter wrong is.
    const swapped = await vigil(project, ['serve', '--prot', '9']);
    expect(swapped.stderr).toBe('vigil: Unknown option `--prot`; did you mean --port?\n');
    const command = await vigil(project, ['sequnce', 'hello']);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe('vigil: unknown command "sequnce"; did you mean sequence? Run "vigil --help" for the list.\n');
    const far = await vigil(project, ['deploy']);
    expect(far.stderr).toBe('vigil: unknown command "deploy". Run "vigil --help" for the list.\n');
  });

  it('a flag given without its value says what the flag takes (exit 2)', async () => {
    const r = await vigil(project, ['sequence', 'anything', '--resume']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^vigil: option `--resume <run-id>` value is missing\. --resume <run-id>: Run the recipe again keeping what succeeded in that run: .*`vigil runs` lists the run ids\n$/);
  });

  it('a recipe that is not valid JSON is reported at its line and column', async () => {
    project.file('.vigil/recipes/broken.json', '{\n  "name": "broken",\n  "type": "sequence",\n  "steps": [ , ]\n}\n');
    const r = await vigil(project, ['recipe', 'list']);
    expect(r.stderr).toContain('broken.json: not valid JSON: line 4, column 14: Unexpected ","');
  });

  it('a syntax error on line 1 of a script is reported at line 1, not in the wrapper', async () => {
    for (const [name, body, at] of [
      ['open.js', 'sdk.notify.send("x"\n', ':1:20'],
      ['extra.js', '}\nreturn 1\n', ':1:1'],
      ['typed.ts', 'const n: number = ;\n', ':1:19'],
    ] as const) {
      project.script(name, body);
      const r = await vigil(project, ['script', 'run', name.replace(/\.\w+$/, '')]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${name}${at}: syntax error:`);
    }
    project.script('fine.js', 'await sleep(1);\nreturn { ok: true };\n');
    expect((await vigil(project, ['script', 'run', 'fine'])).code).toBe(0);
  });

  it('temporal list prints a header over its columns', async () => {
    project.file(
      '.vigil/recipes/nightly.json',
      JSON.stringify({ name: 'nightly', type: 'temporal', schedule: '0 3 * * *', mode: 'command', target: 'true' }),
    );
    const r = await vigil(project, ['temporal', 'list']);
    expect(r.code, r.stderr).toBe(0);
    const [header, row] = r.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'SCHEDULE', 'STATE', 'NEXT RUN', 'LAST RUN', 'FAILURES']);
    expect(row!.split(/\s{2,}/).slice(0, 3)).toEqual(['nightly', '0 3 * * *', 'enabled']);
  });

  it('GET /mp/v0, the address printed at start, answers what discover does', async () => {
    const server = await startServerProcess();
    try {
      const root = await call(server.base, 'GET', '');
      expect(root.status).toBe(200);
      expect(root.body).toEqual((await call(server.base, 'GET', '/discover')).body);
      expect(root.body.protocol).toBe('monitor-protocol');
    } finally {
      await server.stop();
    }
  });
});
