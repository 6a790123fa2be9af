// Bearer tokens: random, shown once, stored only as SHA-256 hashes and
// compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenKind = 'owner' | 'subscription' | 'subscribe' | 'admin';

const prefixes: Record<TokenKind, string> = {
  owner: 'vgo_',
  subscription: 'vgs_',
  subscribe: 'vgk_',
  admin: 'vga_',
};

export function mintToken(kind: TokenKind): { token: string; hash: string } {
  const token = prefixes[kind] + randomBytes(24).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

// A client presents the same token on every request: hashing it each time was
// ~5% of a publish. Both maps are bounded; a flood of distinct tokens only
// evicts the oldest entries, it never grows memory.
const cacheLimit = 4096;
const presentedDigests = new Map<string, Buffer>();
const storedDigests = new Map<string, Buffer>();

function remember(cache: Map<string, Buffer>, key: string, make: (key: string) => Buffer): Buffer {
  let digest = cache.get(key);
  if (digest === undefined) {
    digest = make(key);
    if (cache.size >= cacheLimit) cache.delete(cache.keys().next().value!);
    cache.set(key, digest);
  }
  return digest;
}

// Copied into Node's shared buffer pool: a digest's own ArrayBuffer costs ten times its 32 bytes.
const sha256 = (token: string) => Buffer.from(createHash('sha256').update(token).digest());
const fromHex = (hash: string) => Buffer.from(hash, 'hex');

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(token: string | undefined, storedHash: string | null | undefined): boolean {
  if (!token || !storedHash) return false;
  const presented = remember(presentedDigests, token, sha256);
  const stored = remember(storedDigests, storedHash, fromHex);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** Compares two secrets given in clear (admin and registration tokens) in constant time. */
export function secretMatches(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const a = remember(presentedDigests, presented, sha256);
  const b = remember(presentedDigests, expected, sha256);
  return timingSafeEqual(a, b);
}
