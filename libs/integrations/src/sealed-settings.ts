import type { SecretCipher } from '@switchboard/secrets';
import type { StoredSecretMapping } from './entities/integration.entity';

/** A row that carries provider credentials: an integration or a virtual key with its own. */
export interface CredentialRow {
  key_encrypted: string | null;
  configurations: Record<string, unknown>;
  secret_configurations: string | null;
}

/** Every setting of a row, the sealed ones opened; and its key. Never leaves the process. */
export function openSettings(
  cipher: SecretCipher,
  row: CredentialRow,
): { settings: Record<string, unknown>; secret: Record<string, unknown>; key: string | null } {
  const secret = row.secret_configurations
    ? cipher.decryptJson<Record<string, unknown>>(row.secret_configurations)
    : {};
  return {
    settings: { ...row.configurations, ...secret },
    secret,
    key: row.key_encrypted ? cipher.decrypt(row.key_encrypted) : null,
  };
}

export function sealSecretSettings(cipher: SecretCipher, secret: Record<string, unknown>): string | null {
  return Object.keys(secret).length > 0 ? cipher.encryptJson(secret) : null;
}

/** Merges an update into stored settings: present values replace, null removes, absent keeps. */
export function mergeSettings(
  stored: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged = { ...stored };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete merged[field];
    else if (value !== undefined) merged[field] = value;
  }
  return merged;
}

/** Canonical field names that mappings fill, and whether one fills the key. */
export function mappedTargets(mappings: readonly StoredSecretMapping[]): {
  key: boolean;
  fields: Set<string>;
} {
  const fields = new Set<string>();
  let key = false;
  for (const mapping of mappings) {
    if (mapping.target_field === 'key') key = true;
    else fields.add(mapping.target_field.replace(/^configurations\./, ''));
  }
  return { key, fields };
}

/** A validated DTO instance as plain JSON for a JSON column, without the undefined fields it carries. */
export function toJson(value: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export function toJsonList(value: readonly object[]): Record<string, unknown>[] {
  return value.map(toJson);
}
