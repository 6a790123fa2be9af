import { afterEach, describe, expect, it } from 'vitest';
import { customProvider, makeProject, type Project, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

function paramRecipe(p: Project): void {
  customProvider(p);
  p.recipe({
    name: 'deploy',
    description: 'deploy a service',
    canary: false,
    parameters: {
      SERVICE: { description: 'the service to deploy', required: true },
      TARGET: { description: 'where to', required: true, choices: ['staging', 'production'] },
      REGION: { default: 'eu-west-1', choices: ['eu-west-1', 'us-east-1'] },
      NOTE: { description: 'optional note' },
    },
    steps: [{ label: 'go', backend: 'fake', prompt: 'Deploy $SERVICE to $TARGET in $REGION.' }],
  });
}

describe('declared parameters', () => {
  it('without a terminal, lists every missing required parameter together and starts nothing', async () => {
    project = makeProject();
    paramRecipe(project);
    const r = await runVigil(project, ['sequence', 'deploy']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('needs 2 parameters no --var, environment variable or default sets; nothing was started');
    expect(r.stderr).toContain('--var SERVICE=…  (the service to deploy)');
    expect(r.stderr).toContain('--var TARGET=…  (where to; one of staging, production)');
    expect(project.logEntries()).toEqual([]);
  });

  it('takes --var and the environment, fills defaults, and refuses a value outside choices', async () => {
    project = makeProject();
    paramRecipe(project);
    const ok = await runVigil(project, ['sequence', 'deploy', '--var', 'SERVICE=api'], { TARGET: 'staging' });
    expect(ok.code, ok.stderr).toBe(0);
    expect(project.logEntries().find((c) => c.step === 'go')!.prompt).toBe('Deploy api to staging in eu-west-1.');
    const bad = await runVigil(project, ['sequence', 'deploy', '--var', 'SERVICE=api', '--var', 'TARGET=prod']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('parameters.TARGET: "prod" is not allowed; choices: staging, production');
  });

  it('vigil recipe show lists the parameters with description, required, default and choices', async () => {
    project = makeProject();
    paramRecipe(project);
    const r = await runVigil(project, ['recipe', 'show', 'deploy']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('sequence recipe "deploy": deploy a service');
    expect(r.stdout).toContain('  SERVICE  required  — the service to deploy');
    expect(r.stdout).toContain('  TARGET  required, choices staging, production  — where to');
    expect(r.stdout).toContain('  REGION  optional, default "eu-west-1", choices eu-west-1, us-east-1');
    expect(r.stdout).toContain('  go  (backend fake)');
    const missing = await runVigil(project, ['recipe', 'show', 'nope']);
    expect(missing.code).toBe(2);
  });
});
