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

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(token: string | undefined, storedHash: string | null | undefined): boolean {
  if (!token || !storedHash) return false;
  const presented = Buffer.from(hashToken(token), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** Compares two secrets given in clear (admin and registration tokens) in constant time. */
export function secretMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  return tokenMatches(presented, hashToken(expected));
}
