// The encrypted-file vault used where no OS keyring answers (headless
// machines, containers): ~/.vigil/vault.enc, AES-256-GCM with a random
// 12-byte IV per write, the 32-byte key in ~/.vigil/vault.key. Both files
// 0600 in a 0700 folder. Writes replace the file atomically under a lock
// file, so concurrent `vigil vault set` calls never lose or corrupt entries.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VigilError } from '../errors/vigil-error.ts';
import { withFileLock } from '../file-lock/file-lock.ts';
import { ensureVigilHome } from '../home/home.ts';

/** service (`vigil-vault/<scope>`) → key → value */
export type VaultData = Record<string, Record<string, string>>;

const FORMAT = 'vigil-vault-1';

export interface FilePaths {
  dir: string;
  data: string;
  key: string;
  lock: string;
}

export function filePaths(env: NodeJS.ProcessEnv = process.env): FilePaths {
  const dir = ensureVigilHome(env);
  return { dir, data: join(dir, 'vault.enc'), key: join(dir, 'vault.key'), lock: join(dir, 'vault.lock') };
}

function loadKey(paths: FilePaths, create: boolean): Buffer | null {
  if (existsSync(paths.key)) {
    const key = Buffer.from(readFileSync(paths.key, 'utf8').trim(), 'hex');
    if (key.length !== 32) throw new VigilError('VAULT_UNAVAILABLE', `vault key file ${paths.key} is damaged (expected 64 hex characters)`);
    return key;
  }
  if (!create) return null;
  if (existsSync(paths.data)) {
    throw new VigilError('VAULT_UNAVAILABLE', `vault file ${paths.data} exists but its key ${paths.key} is missing; restore the key file or remove both`);
  }
  const key = randomBytes(32);
  writeFileSync(paths.key, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

export function readVaultFile(paths: FilePaths): VaultData {
  if (!existsSync(paths.data)) return {};
  const key = loadKey(paths, false);
  if (!key) throw new VigilError('VAULT_UNAVAILABLE', `vault file ${paths.data} exists but its key ${paths.key} is missing`);
  try {
    const doc = JSON.parse(readFileSync(paths.data, 'utf8')) as { format: string; iv: string; tag: string; data: string };
    if (doc.format !== FORMAT) throw new Error(`unknown format "${doc.format}"`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(doc.iv, 'base64'));
    decipher.setAAD(Buffer.from(FORMAT));
    decipher.setAuthTag(Buffer.from(doc.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(doc.data, 'base64')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as VaultData;
  } catch (error) {
    throw new VigilError('VAULT_UNAVAILABLE', `vault file ${paths.data} cannot be decrypted with ${paths.key}: ${(error as Error).message}`);
  }
}

function writeVaultFile(paths: FilePaths, data: VaultData): void {
  const key = loadKey(paths, true)!;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(FORMAT));
  const body = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
  const doc = { format: FORMAT, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: body.toString('base64') };
  const tmp = `${paths.data}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(doc), { mode: 0o600 });
  renameSync(tmp, paths.data);
}

/** Runs `change` on the decrypted data under the vault lock and writes the result back. */
export function updateVaultFile<T>(paths: FilePaths, change: (data: VaultData) => T): T {
  return withFileLock(paths.lock, 'VAULT_UNAVAILABLE', () => {
    const data = readVaultFile(paths);
    const result = change(data);
    writeVaultFile(paths, data);
    return result;
  });
}
