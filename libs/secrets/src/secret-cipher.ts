import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig, isMasterKey, masterKeyBytes } from '@switchboard/config';
import { setAtRestCipher } from './at-rest';

/** Stored form: `enc:v1:<key id>:<iv>:<tag>:<ciphertext>`, the last three base64url. */
const PREFIX = 'enc:v1:';

interface MasterKey {
  id: string;
  bytes: Buffer;
}

function toMasterKey(value: string): MasterKey {
  const bytes = masterKeyBytes(value);
  // The id names the key without revealing it: 8 hex characters of its SHA-256.
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
}

export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptionError';
  }
}

/**
 * AES-256-GCM for every stored credential. Each value carries the id of the master key that
 * sealed it, so a new `GATEWAY_ENCRYPTION_KEY` can be introduced while the former ones (in
 * `GATEWAY_ENCRYPTION_KEYS_PREVIOUS`) still open old values until the re-encrypt command has run.
 */
export class SecretCipher {
  private readonly current: MasterKey;
  private readonly byId = new Map<string, MasterKey>();

  constructor(currentKey: string, previousKeys: readonly string[] = []) {
    this.current = toMasterKey(currentKey);
    for (const key of [this.current, ...previousKeys.map(toMasterKey)]) {
      if (!this.byId.has(key.id)) this.byId.set(key.id, key);
    }
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  static isEncrypted(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  /** The key id a stored value was sealed with, or null when it is not an encrypted value. */
  static keyIdOf(value: string): string | null {
    if (!SecretCipher.isEncrypted(value)) return null;
    return value.slice(PREFIX.length).split(':')[0] ?? null;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return `${PREFIX}${this.current.id}:${iv.toString('base64url')}:${tag.toString('base64url')}:${ciphertext.toString('base64url')}`;
  }

  decrypt(stored: string): string {
    if (!SecretCipher.isEncrypted(stored))
      throw new SecretDecryptionError('value is not an encrypted secret');
    const [keyId, iv, tag, ciphertext] = stored.slice(PREFIX.length).split(':');
    const key = this.byId.get(keyId ?? '');
    if (!key) {
      throw new SecretDecryptionError(
        `secret was sealed with master key ${keyId}, which is neither GATEWAY_ENCRYPTION_KEY nor in GATEWAY_ENCRYPTION_KEYS_PREVIOUS`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv ?? '', 'base64url'));
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext ?? '', 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(`secret sealed with master key ${keyId} failed authentication`);
    }
  }

  /** Re-seals a value under the current key; values already under it are returned unchanged. */
  reencrypt(stored: string): string {
    if (SecretCipher.keyIdOf(stored) === this.current.id) return stored;
    return this.encrypt(this.decrypt(stored));
  }

  encryptJson(value: unknown): string {
    return this.encrypt(JSON.stringify(value));
  }

  decryptJson<T>(stored: string): T {
    return JSON.parse(this.decrypt(stored)) as T;
  }
}

/**
 * The master key from the configuration, or (unset) one generated once into the data folder with
 * a warning, as DESIGN.md's operational contract says.
 */
export function loadMasterKey(config: AppConfig, logger: Pick<Logger, 'warn'>): string {
  if (config.encryptionKey) return config.encryptionKey;
  const file = join(config.dataDir, 'encryption.key');
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (!isMasterKey(stored))
      throw new Error(`${file} does not hold a 32-byte key; restore it or set GATEWAY_ENCRYPTION_KEY`);
    return stored;
  }
  const generated = randomBytes(32).toString('hex');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${generated}\n`, { mode: 0o600, flag: 'wx' });
  logger.warn(
    `GATEWAY_ENCRYPTION_KEY is not set: generated a master key into ${file}. Back it up, or set GATEWAY_ENCRYPTION_KEY; without it stored credentials cannot be read.`,
  );
  return generated;
}

/** Nest provider: one cipher per process, built from the configuration. */
export const SECRET_CIPHER_FACTORY = {
  provide: SecretCipher,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => {
    const cipher = new SecretCipher(
      loadMasterKey(config, new Logger('SecretCipher')),
      config.previousEncryptionKeys,
    );
    setAtRestCipher(cipher);
    return cipher;
  },
};
