// sdk.sequence.run returns a run's output, and says where it is when it is more than a script should hold.
import { readFileSync, statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lastJson, makeSdkProject, type SdkProject, vigil } from './helpers.ts';

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

describe('sdk.sequence.run', () => {
  it('refuses an output over 16 MB with OUTPUT_TOO_LARGE naming output.txt, which holds every byte', async () => {
    project.file('.vigil/recipes/big.json', JSON.stringify({ name: 'big', canary: false, backend: 'shell', steps: [{ label: 'spew', prompt: "head -c 17000000 /dev/zero | tr '\\0' x; echo; echo the end" }] }));
    project.script('t.js', `try { sdk.sequence.run('big'); return 'returned'; } catch (e) { return { code: e.code, message: e.message, details: e.details }; }`);
    const r = await vigil(project, ['script', 'run', 't']);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as { code: string; message: string; details: { run_id: string; status: string; output_file: string } };
    expect(out.code).toBe('OUTPUT_TOO_LARGE');
    expect(out.details.status).toBe('succeeded');
    expect(out.message).toContain(`read it from ${out.details.output_file}`);
    expect(statSync(out.details.output_file).size).toBe(17_000_000 + '\nthe end\n'.length);
    expect(readFileSync(out.details.output_file, 'utf8').endsWith('x\nthe end\n')).toBe(true);
  });
});
