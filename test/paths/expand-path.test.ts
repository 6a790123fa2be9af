import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandPath } from '../../src/paths/expand-path.ts';

describe('expandPath', () => {
  it('puts ~ and ~/… in the home folder, a relative path under the base, and keeps an absolute one', () => {
    expect(expandPath('~', '/project')).toBe(homedir());
    expect(expandPath('~/work/repo', '/project')).toBe(join(homedir(), 'work/repo'));
    expect(expandPath('sub/dir', '/project')).toBe('/project/sub/dir');
    expect(expandPath('../other', '/project/a')).toBe('/project/other');
    expect(expandPath('/abs/path', '/project')).toBe('/abs/path');
    expect(expandPath('~user/x', '/project')).toBe('/project/~user/x');
  });
});
