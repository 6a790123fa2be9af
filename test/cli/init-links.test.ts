// Issue 42 (low): `vigil init` never writes through a symbolic link or
// outside the project. A dangling link where the local agent goes must not
// create a file outside; `--force` must not overwrite the file a linked
// vigil.yml points at; a linked .vigil folder is refused too. Each refusal
// names the link and writes nothing. Run with the real CLI.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { scaled } from '../support/time-scale.ts';

let project: SdkProject;
let outside: string;
beforeEach(() => {
  project = makeSdkProject();
  // Outside the project folder: the attack's target.
  outside = join(project.tmp, 'outside');
  mkdirSync(outside, { recursive: true });
});
afterEach(() => project.cleanup());

it('refuses a dangling link where the local agent goes, and creates nothing outside', { timeout: scaled(60_000) }, async () => {
  mkdirSync(join(project.root, '.vigil', 'agents'), { recursive: true });
  symlinkSync(join(outside, 'planted.mjs'), join(project.root, '.vigil', 'agents', 'local-agent.mjs'));
  const r = await vigil(project, ['init']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`.vigil/agents/local-agent.mjs is a symbolic link (to ${join(outside, 'planted.mjs')}); init never writes through a link`);
  expect(existsSync(join(outside, 'planted.mjs'))).toBe(false);
  expect(existsSync(join(project.root, 'vigil.yml'))).toBe(false);
  // --force is no way around it.
  expect((await vigil(project, ['init', '--force'])).code).toBe(2);
  expect(existsSync(join(outside, 'planted.mjs'))).toBe(false);
});

it('--force does not overwrite what a linked vigil.yml points at', { timeout: scaled(60_000) }, async () => {
  const target = join(outside, 'precious.yml');
  writeFileSync(target, 'keep me\n');
  symlinkSync(target, join(project.root, 'vigil.yml'));
  const r = await vigil(project, ['init', '--force']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('vigil.yml is a symbolic link');
  expect(readFileSync(target, 'utf8')).toBe('keep me\n');
  expect(existsSync(join(project.root, '.vigil', 'recipes', 'hello.json'))).toBe(false);
});

it('refuses a .vigil folder that is a link to another folder', { timeout: scaled(60_000) }, async () => {
  // makeSdkProject made .vigil/scripts; here .vigil is the link.
  rmSync(join(project.root, '.vigil'), { recursive: true, force: true });
  symlinkSync(outside, join(project.root, '.vigil'));
  const r = await vigil(project, ['init']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('.vigil is a symbolic link');
  expect(existsSync(join(outside, 'recipes'))).toBe(false);
  expect(existsSync(join(outside, 'agents'))).toBe(false);
});

it('still writes a fresh project, and overwrites real files with --force', { timeout: scaled(60_000) }, async () => {
  expect((await vigil(project, ['init'])).code).toBe(0);
  writeFileSync(join(project.root, 'vigil.yml'), 'mine\n');
  const forced = await vigil(project, ['init', '--force']);
  expect(forced.code, forced.stderr).toBe(0);
  expect(readFileSync(join(project.root, 'vigil.yml'), 'utf8')).toContain('default_backend: local');
});
