// `npm run build` and `npm pack`, done in a throwaway copy of the project so
// that the repository's own dist/ is never touched while other tests run.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';

let dir: string;
const npm = (cwd: string, ...args: string[]) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error' } });

beforeAll(() => {
  dir = tempDir('vigil-build-');
  const project = join(dir, 'project');
  mkdirSync(project);
  for (const entry of ['package.json', 'bin', 'src', 'scripts', 'docs', 'README.md', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(repoRoot, entry), join(project, entry), { recursive: true });
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(project, 'node_modules'));
}, scaled(120_000));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('build and pack', () => {
  it('npm run build produces dist/ and bin/vigil.js runs it', () => {
    const project = join(dir, 'project');
    npm(project, 'run', 'build');
    expect(existsSync(join(project, 'dist/cli/main.js'))).toBe(true);
    expect(existsSync(join(project, 'dist/protocol/schemas/common.json'))).toBe(true);
    expect(existsSync(join(project, 'dist/recipes/recipe.schema.json'))).toBe(true);
    const out = execFileSync(process.execPath, [join(project, 'bin/vigil.js'), '--version'], { encoding: 'utf8' });
    expect(out).toMatch(/^vigil\/\d+\.\d+\.\d+/);
  }, scaled(120_000));

  it('npm pack yields a package whose CLI runs from dist/ alone', () => {
    const project = join(dir, 'project');
    const packed = join(dir, 'packed');
    mkdirSync(packed);
    // npm pack runs the `prepare` script first, and that is the build the test before ran: the
    // package is made from that dist/ (--ignore-scripts) instead of a second build of the same
    // sources (7 CPU-seconds). That pack still builds, from a clone without dist/, is checked here.
    const scripts = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).scripts;
    expect(scripts.prepare).toBe(scripts.build);
    npm(project, 'pack', '--ignore-scripts', '--pack-destination', packed);
    const tarball = readdirSync(packed).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    execFileSync('tar', ['xzf', join(packed, tarball!), '-C', packed]);
    const pkg = join(packed, 'package');
    expect(existsSync(join(pkg, 'src'))).toBe(false);
    expect(existsSync(join(pkg, 'dist/cli/main.js'))).toBe(true);
    // Dependencies come from the repository; the registry is not needed to prove the package is whole.
    symlinkSync(join(repoRoot, 'node_modules'), join(pkg, 'node_modules'));
    const help = spawnSync(process.execPath, [join(pkg, 'bin/vigil.js'), 'recipe', 'schema'], { encoding: 'utf8' });
    expect(help.stderr).toBe('');
    expect(help.stdout).toContain(join(pkg, 'dist/recipes/recipe.schema.json'));
    const tools = spawnSync(process.execPath, [join(pkg, 'bin/vigil.js'), 'tools'], { encoding: 'utf8' });
    expect(tools.status).toBe(0);
    expect(tools.stdout).toContain('monitor_create');
  }, scaled(180_000));
});
