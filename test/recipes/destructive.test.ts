// The destructive-intent guard, case by case: shell build commands (read with
// a real shell parser, after variable expansion) and prompts (only their code).
import { describe, expect, it } from 'vitest';
import { scanShell, scanText } from '../../src/recipes/preflight/destructive.ts';
import { scaled } from '../support/time-scale.ts';

const env = { CMD: 'rm -rf /', TARGET: '/usr', SAFE: './build', BRANCH: 'main' };

// [build command, what must be found (undefined: nothing)]
const shellCases: Array<[string, string | undefined]> = [
  ['rm -rf /', 'recursive delete of /'],
  ['rm -rf "$HOME"', 'recursive delete of $HOME'],
  ['rm -rf ~', 'recursive delete of $HOME'],
  ['rm -rf ~/', 'recursive delete of $HOME/'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${HOME} form, on purpose
  ['rm -rf ${HOME}/*', 'recursive delete of $HOME/*'],
  ['rm -r -f /home', 'recursive delete of /home'],
  ['rm -fr /usr/', 'recursive delete of /usr/'],
  ['rm --recursive --force /etc', 'recursive delete of /etc'],
  ['rm -rf /*', 'recursive delete of /*'],
  ['sudo rm -rf /var', 'recursive delete of /var'],
  ['/bin/rm -Rf /opt', 'recursive delete of /opt'],
  ['$CMD', 'recursive delete of /'],
  ['echo start; $CMD; echo end', 'recursive delete of /'],
  ['X="rm -rf /"; $X', 'recursive delete of /'],
  ['rm -rf "$TARGET"', 'recursive delete of /usr'],
  ['rm -rf "$UNSET_DIR/"', 'recursive delete of /'],
  ['bash -c "rm -rf /"', 'recursive delete of /'],
  ["sh -c 'rm -rf ~'", 'recursive delete of $HOME'],
  ['eval "rm -rf /"', 'recursive delete of /'],
  ['make && rm -rf /', 'recursive delete of /'],
  ['true || rm -rf /', 'recursive delete of /'],
  ['(cd x; rm -rf /)', 'recursive delete of /'],
  ['echo $(rm -rf /)', 'recursive delete of /'],
  ['if true; then rm -rf /; fi', 'recursive delete of /'],
  ['env FOO=1 rm -rf /', 'recursive delete of /'],
  ['find / -delete', 'find that deletes under /'],
  ['find ~ -name "*.tmp" -delete', 'find that deletes under $HOME'],
  ['find /usr -type f -exec rm {} +', 'find that deletes under /usr'],
  ['chmod -R 777 /', 'recursive chmod of /'],
  ['chown -R nobody /etc', 'recursive chown of /etc'],
  ['git push --force origin main', 'force push or remote branch deletion'],
  ['git push -f', 'force push or remote branch deletion'],
  ['git push origin +main', 'force push or remote branch deletion'],
  ['git push origin :main', 'force push or remote branch deletion'],
  ['git push origin --delete main', 'force push or remote branch deletion'],
  ['git push --force-with-lease', 'force push or remote branch deletion'],
  ['git clean -fdx', 'git clean -fdx'],
  ['terraform destroy -auto-approve', 'terraform destroy'],
  ['terraform apply -destroy', 'terraform destroy'],
  ['kubectl delete namespace prod', 'kubectl delete'],
  ['helm uninstall api', 'helm uninstall'],
  ['mkfs.ext4 /dev/sda1', 'mkfs'],
  ['dd if=/dev/zero of=/dev/sda bs=1M', 'raw write to a disk device'],
  ['psql -c "DROP TABLE users"', 'DROP TABLE/DATABASE'],
  ['psql -c "DELETE FROM users"', 'DELETE without WHERE'],
  ['mysql -e "TRUNCATE TABLE logs"', 'TRUNCATE TABLE'],
  ['psql <<EOF\nDELETE FROM sessions;\nEOF', 'DELETE without WHERE'],
  [':(){ :|:& };:', 'fork bomb'],
  // Ordinary commands.
  ['rm -rf ./build dist/', undefined],
  ['rm -rf "$SAFE"', undefined],
  ['rm -rf "$HOME/.cache/tool"', undefined],
  ['rm -rf /tmp/build-123', undefined],
  ['rm -f /etc/app.conf.bak', undefined],
  ['rm /usr', undefined],
  ['rm -rf node_modules && npm ci', undefined],
  ['find . -name "*.o" -delete', undefined],
  ['find / -name core', undefined],
  ['git push origin main', undefined],
  ['git push origin "$BRANCH"', undefined],
  ['git push -u origin feature', undefined],
  ['git clean -n', undefined],
  ['terraform plan', undefined],
  ['kubectl get pods', undefined],
  ['psql -c "DELETE FROM users WHERE id = 4"', undefined],
  ['psql -c "SELECT * FROM users"', undefined],
  ['truncate -s 0 app.log', undefined],
  ['echo "rm -rf /"', undefined],
  ['grep -r "DROP" src', undefined],
  ['chmod -R 755 ./public', undefined],
  ['npm test', undefined],
];

// [prompt, what must be found (undefined: nothing)]
const promptCases: Array<[string, string | undefined]> = [
  ['Never DROP TABLE anything.', undefined],
  ['Do not run rm -rf / under any circumstances.', undefined],
  ['Avoid `git push --force`; ask first.', 'force push or remote branch deletion'],
  ['Clean up with `rm -rf ~`.', 'recursive delete of $HOME'],
  ['Run:\n```sh\nrm -rf /home\n```\n', 'recursive delete of /home'],
  ['```sql\nDELETE FROM users;\n```', 'DELETE without WHERE'],
  ['```sql\nDELETE FROM users WHERE id = 1;\n```', undefined],
  ['Then `DROP TABLE users;`', 'DROP TABLE/DATABASE'],
  ['Run `terraform destroy` in staging.', 'terraform destroy'],
  ['Run `$CMD` to reset.', 'recursive delete of /'],
  ['Use `rm -rf build/` between runs.', undefined],
  ['~~~\nkubectl delete deployment api\n~~~', 'kubectl delete'],
  ['The word `delete` is fine, and so is `find . -delete`.', undefined],
  ['```bash\nfind / -delete\n', 'find that deletes under /'],
];

describe('destructive intents in build commands', () => {
  it.each(shellCases)('%j', (command, expected) => {
    const found = scanShell(command, 'build_command', env).map((f) => f.pattern);
    if (expected === undefined) expect(found).toEqual([]);
    else expect(found).toContain(expected);
  });
});

describe('destructive intents in prompts (code only)', () => {
  it.each(promptCases)('%j', (prompt, expected) => {
    const found = scanText(prompt, 'prompt', env).map((f) => f.pattern);
    if (expected === undefined) expect(found).toEqual([]);
    else expect(found).toContain(expected);
  });

  it('names the line of the prompt the command is on', () => {
    const [finding] = scanText('Intro.\n\n```sh\necho hi\nrm -rf /\n```\n', 'p.md');
    expect(finding).toMatchObject({ where: 'p.md', line: 5, pattern: 'recursive delete of /', excerpt: 'rm -rf /' });
  });
});

it('has at least 60 cases, both ways', () => {
  const all = [...shellCases, ...promptCases];
  expect(all.length).toBeGreaterThanOrEqual(60);
  expect(all.filter(([, e]) => e === undefined).length).toBeGreaterThanOrEqual(25);
});

describe('the guard in a run', () => {
  it('refuses a build command whose variable holds rm -rf /, before anything runs', async () => {
    const { makeProject, runVigil } = await import('./helpers.ts');
    const project = makeProject();
    try {
      const recipe = project.recipe({ name: 'indirect', canary: false, env: { CMD: 'rm -rf /' }, steps: [{ label: 'build', args: ['x'], build_command: '$CMD' }] });
      const r = await runVigil(project, ['sequence', 'indirect']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${recipe}: step "build".build_command:1: recursive delete of /: $CMD`);
      expect(project.logEntries()).toEqual([]);
    } finally {
      project.cleanup();
    }
  }, scaled(60_000));
});
