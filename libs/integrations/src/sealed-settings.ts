import type { SecretCipher } from '@switchboard/secrets';
import type { StoredSecretMapping } from './entities/integration.entity';
import { maskSecret } from './masking';
import { SettingsContext, validateSettings } from './provider-settings';

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

/** The stored form of a row's credentials; the key fields only when a key was given. */
export interface SealedCredentials {
  configurations: Record<string, unknown>;
  secret_configurations: string | null;
  secret_mappings: StoredSecretMapping[];
  key_encrypted?: string;
  key_mask?: string;
}

/**
 * Validates a credential row's settings for its provider and seals them, on create and on update
 * alike: plain settings as they are, secret ones sealed, a given key sealed and masked. The key
 * counts as present when given, already stored, or filled by a secret mapping; so does a field a
 * mapping fills.
 */
export function sealCredentials(
  cipher: SecretCipher,
  provider: string,
  input: {
    settings: Record<string, unknown>;
    mappings: StoredSecretMapping[];
    key: string | undefined;
    storedKey: string | null;
  },
  context: Pick<SettingsContext, 'paramPrefix' | 'camel' | 'strictDeployments'>,
): { columns: SealedCredentials; secret: Record<string, unknown> } {
  const targets = mappedTargets(input.mappings);
  const split = validateSettings(provider, input.settings, {
    ...context,
    hasKey: Boolean(input.key ?? input.storedKey) || targets.key,
    mappedFields: targets.fields,
  });
  const columns: SealedCredentials = {
    configurations: split.plain,
    secret_configurations: sealSecretSettings(cipher, split.secret),
    secret_mappings: input.mappings,
  };
  if (input.key !== undefined) {
    columns.key_encrypted = cipher.encrypt(input.key);
    columns.key_mask = maskSecret(input.key);
  }
  // The secret settings as validated, for an answer that shows them masked.
  return { columns, secret: split.secret };
}

/** A validated DTO instance as plain JSON for a JSON column, without the undefined fields it carries. */
export function toJson(value: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export function toJsonList(value: readonly object[]): Record<string, unknown>[] {
  return value.map(toJson);
}
