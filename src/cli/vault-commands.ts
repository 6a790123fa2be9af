// `vigil vault set|get|list|delete`: the CLI face of src/vault. `set`
// reads the value from stdin, never from argv (argv shows in `ps`).
import type { CAC } from 'cac';
import { UsageError } from './options.ts';
import { defineCommand } from './command.ts';
import { printJson, readStdin, runSdkCommand, unknownAction } from './sdk-command.ts';
import { VigilError } from '../errors/vigil-error.ts';

const actions = ['set', 'get', 'list', 'delete', 'backend'];

export function registerVaultCommands(cli: CAC): void {
  defineCommand(cli, 'vault <action> [key] [...extra]', 'Secrets: "set KEY" (value from stdin), "get KEY", "list", "delete KEY", "backend" (keyring or encrypted file)')
    .option('--scope <scope>', 'Scope of the key (service vigil-vault/<scope>; default "default")')
    .option('--json', 'Print the result as JSON')
    .example('printf %s "$TOKEN" | vigil vault set api_key --scope api')
    .action((action: string, key: string | undefined, extra: string[], options: { scope?: unknown; json?: boolean }) =>
      runSdkCommand(async () => {
        if (!actions.includes(action)) unknownAction('vault', action, actions);
        // Not echoed: after "set KEY" it is the secret itself, typed where ps and the shell's history keep it.
        if (extra.length > 0) {
          throw new UsageError(
            action === 'set'
              ? 'vault set: the value is read from stdin, never from the command line (there ps and the shell\'s history keep it): printf %s "$VALUE" | vigil vault set KEY'
              : `vault ${action}: takes ${action === 'list' || action === 'backend' ? 'no KEY' : 'one KEY'}; got ${extra.length} more ${extra.length === 1 ? 'argument' : 'arguments'}`,
          );
        }
        const [{ vaultNamespace }, { takeMigrationNote, takeRescueNote, vaultBackend }, { sdkContext }] = await Promise.all([
          import('../sdk/namespaces/vault.ts'),
          import('../vault/vault.ts'),
          import('../workspace/context.ts'),
        ]);
        const scope = options.scope === undefined ? undefined : String(options.scope);
        const vault = vaultNamespace(sdkContext({ workspace: process.cwd() }));
        const needKey = (): string => {
          if (key === undefined) throw new UsageError(`vault ${action}: needs a KEY`);
          return String(key);
        };
        const opts = scope === undefined ? {} : { scope };
        if (action === 'backend') {
          process.stdout.write(`${vaultBackend()}\n`);
        } else if (action === 'set') {
          const k = needKey();
          if (process.stdin.isTTY) process.stderr.write('value (end with Ctrl-D):\n');
          const { MAX_VALUE } = await import('../vault/vault.ts');
          const value = (await readStdin('value', MAX_VALUE)).replace(/\r?\n$/, '');
          vault.set(k, value, opts);
          if (!options.json) process.stderr.write(`stored ${scope ? `${scope}/` : ''}${k}\n`);
        } else if (action === 'get') {
          const value = vault.get(needKey(), opts);
          if (options.json) printJson(value);
          else if (value === null) throw new VigilError('NOT_FOUND', `vault get: no key "${key}"${scope ? ` in scope "${scope}"` : ''} (see "vigil vault list")`);
          else process.stdout.write(`${value}\n`);
        } else if (action === 'delete') {
          const existed = vault.delete(needKey(), opts);
          if (options.json) printJson({ deleted: existed });
          else process.stderr.write(existed ? `deleted ${key}\n` : `no key "${key}"\n`);
        } else {
          const names = vault.list(opts);
          if (options.json) printJson(names);
          else if (names.length > 0) process.stdout.write(`${names.join('\n')}\n`);
        }
        const note = takeMigrationNote();
        if (note) process.stderr.write(`moved ${note.keys} keys from the plaintext ${note.from} into the ${vaultBackend()} vault and removed it\n`);
        const rescue = takeRescueNote();
        if (rescue?.moved.length)
          process.stderr.write(`moved ${rescue.moved.length} secrets from the kernel keyring (keyutils, lost at reboot) into the encrypted vault file: ${rescue.moved.join(', ')}\n`);
        if (rescue?.kept.length)
          process.stderr.write(`removed ${rescue.kept.length} stale copies from the kernel keyring (keyutils); the vault file already held them: ${rescue.kept.join(', ')}\n`);
      }),
    );
}
