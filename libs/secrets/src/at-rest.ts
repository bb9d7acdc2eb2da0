import type { SecretCipher } from './secret-cipher';

/**
 * The process's cipher for TypeORM column transformers, which TypeORM builds outside Nest's
 * injector. SecretsModule sets it when it creates the cipher; every app in one process shares the
 * master key of the configuration it started with.
 */
let current: SecretCipher | null = null;

export function setAtRestCipher(cipher: SecretCipher): void {
  current = cipher;
}

export function atRestCipher(): SecretCipher {
  if (!current) throw new Error('No cipher for sealed columns: SecretsModule has not started');
  return current;
}
