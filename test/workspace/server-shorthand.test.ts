// `server:` in vigil.yml: the URL alone is short for `{base: <url>}`, and a
// value that is neither is refused naming the field.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadWorkspaceConfig } from '../../src/workspace/workspace-config.ts';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function projectWith(yml: string): string {
  root = mkdtempSync(join(tmpdir(), 'vigil-yml-'));
  writeFileSync(join(root, 'vigil.yml'), yml);
  return root;
}

describe('vigil.yml server', () => {
  it('takes the URL alone as server.base', () => {
    const config = loadWorkspaceConfig(projectWith('server: http://127.0.0.1:8131\n'), {});
    expect(config.server).toEqual({ base: 'http://127.0.0.1:8131' });
  });

  it('refuses a server that is not a URL, naming server.base and the form it takes', () => {
    expect(() => loadWorkspaceConfig(projectWith('server: 127.0.0.1:8131\n'), {})).toThrow(/invalid workspace file\n {2}- server\.base: "127\.0\.0\.1:8131" must match \^https\?:\/\//);
  });
});
