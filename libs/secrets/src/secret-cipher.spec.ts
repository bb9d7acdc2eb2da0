import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@switchboard/config';
import { SecretCipher, SecretDecryptionError, loadMasterKey } from './secret-cipher';

const KEY_A = 'a1'.repeat(32);
const KEY_B = Buffer.alloc(32, 7).toString('base64');

describe('SecretCipher', () => {
  it('round-trips a value and never stores the plaintext', () => {
    const cipher = new SecretCipher(KEY_A);
    const sealed = cipher.encrypt('sk-live-123');
    expect(sealed).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(sealed).not.toContain('sk-live-123');
    expect(cipher.decrypt(sealed)).toBe('sk-live-123');
    expect(cipher.encrypt('sk-live-123')).not.toBe(sealed); // a fresh IV each time
  });

  it('refuses a tampered value', () => {
    const cipher = new SecretCipher(KEY_A);
    const sealed = cipher.encrypt('secret');
    const parts = sealed.split(':');
    const body = Buffer.from(parts[5], 'base64url');
    body[0] ^= 1;
    parts[5] = body.toString('base64url');
    expect(() => cipher.decrypt(parts.join(':'))).toThrow(SecretDecryptionError);
  });

  it('opens values of a previous key and re-seals them under the current one', () => {
    const old = new SecretCipher(KEY_A);
    const sealed = old.encrypt('rotate me');
    const rotated = new SecretCipher(KEY_B, [KEY_A]);
    expect(rotated.decrypt(sealed)).toBe('rotate me');
    const resealed = rotated.reencrypt(sealed);
    expect(SecretCipher.keyIdOf(resealed)).toBe(rotated.currentKeyId);
    expect(rotated.reencrypt(resealed)).toBe(resealed);
    expect(() => new SecretCipher(KEY_B).decrypt(sealed)).toThrow(/neither GATEWAY_ENCRYPTION_KEY/);
  });

  it('generates a master key into the data folder once when none is configured', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-cipher-'));
    try {
      const warnings: string[] = [];
      const config = loadConfig({ GATEWAY_DATA_DIR: dir });
      const first = loadMasterKey(config, { warn: (message: string) => warnings.push(message) });
      const second = loadMasterKey(config, { warn: (message: string) => warnings.push(message) });
      expect(first).toBe(second);
      expect(readFileSync(join(dir, 'encryption.key'), 'utf8').trim()).toBe(first);
      expect(warnings).toHaveLength(1);
      expect(loadMasterKey(loadConfig({ GATEWAY_ENCRYPTION_KEY: KEY_B }), { warn: () => undefined })).toBe(
        KEY_B,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a malformed previous key list in the configuration', () => {
    expect(() => loadConfig({ GATEWAY_ENCRYPTION_KEYS_PREVIOUS: 'short' })).toThrow(
      /GATEWAY_ENCRYPTION_KEYS_PREVIOUS/,
    );
  });
});
