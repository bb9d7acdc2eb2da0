import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'sb-';

/** 256 bits of randomness: a fast hash is enough, since nobody can guess a key to brute-force. */
export function generateRawKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Runs on every authenticated request: the one-shot `hash` costs a quarter of a `createHash` object. */
export function hashKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

export function maskKey(raw: string): string {
  return `${raw.slice(0, KEY_PREFIX.length + 4)}********${raw.slice(-4)}`;
}
