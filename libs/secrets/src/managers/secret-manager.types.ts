/** The external secret managers a secret reference can point into (the reference's `manager_type`). */
export const SECRET_MANAGER_TYPES = ['aws_sm', 'azure_kv', 'hashicorp_vault'] as const;
export type SecretManagerType = (typeof SECRET_MANAGER_TYPES)[number];

export const SECRET_MANAGER_LABELS: Record<SecretManagerType, string> = {
  hashicorp_vault: 'HashiCorp Vault',
  aws_sm: 'AWS Secrets Manager',
  azure_kv: 'Azure Key Vault',
};

export function isSecretManagerType(value: unknown): value is SecretManagerType {
  return typeof value === 'string' && (SECRET_MANAGER_TYPES as readonly string[]).includes(value);
}

/** Where a secret lives inside one manager. */
export interface SecretLocation {
  /** Vault: path inside the KV v2 mount; AWS: secret name or ARN; Azure: secret name. */
  path: string;
  /** Picks one field of a JSON (or Vault key/value) secret; absent: the whole secret as text. */
  key?: string | null;
  /** Vault: version number; AWS: VersionId (a UUID) or a staging label; Azure: version id. */
  version?: string | null;
}

/** One configured connection to a secret manager; built from a reference's auth config. */
export interface SecretManagerClient {
  readonly managerType: SecretManagerType;
  /** Where it reads from, for error messages: an address, vault URL or region, never a credential. */
  readonly target: string;
  read(location: SecretLocation): Promise<string>;
}

/** Why a read failed; the resolver turns this into the client-facing error. */
export type SecretManagerFailure =
  | 'unreachable'
  | 'timeout'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'key_not_found'
  | 'invalid_config'
  | 'invalid_response'
  | 'upstream_error';

/**
 * A failed read. The message describes the failure for an operator (status, the manager's own
 * error text) and must never contain a credential or a secret value.
 */
export class SecretManagerError extends Error {
  constructor(
    readonly reason: SecretManagerFailure,
    message: string,
    readonly upstreamStatus?: number,
  ) {
    super(message);
    this.name = 'SecretManagerError';
  }
}

/**
 * Process-level facts the clients read for ambient credentials (AWS service role, Azure managed
 * identity, Vault Kubernetes auth). Injected so tests can point them at local mocks.
 */
export interface SecretManagerEnvironment {
  env: Record<string, string | undefined>;
  readFile(path: string): string;
  /** Timeout of one HTTP exchange with a manager. */
  requestTimeoutMs: number;
}

/**
 * Picks `key` from a structured secret, or returns the whole secret as text. Non-string leaves
 * are returned as their JSON text, so a number or an object survives the trip.
 */
export function pickSecretField(
  document: Record<string, unknown>,
  key: string | null | undefined,
  describe: string,
): string {
  if (key === null || key === undefined || key === '') return JSON.stringify(document);
  if (!Object.prototype.hasOwnProperty.call(document, key)) {
    throw new SecretManagerError('key_not_found', `${describe} has no key '${key}'`);
  }
  const value = document[key];
  if (typeof value === 'string') return value;
  if (value === null || value === undefined)
    throw new SecretManagerError('key_not_found', `${describe} has key '${key}' but it is empty`);
  return JSON.stringify(value);
}

/** Picks `key` from a secret stored as text: the text must then be a JSON object. */
export function pickFromText(text: string, key: string | null | undefined, describe: string): string {
  if (key === null || key === undefined || key === '') return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SecretManagerError(
      'key_not_found',
      `${describe} is not a JSON object, so its key '${key}' cannot be picked`,
    );
  }
  return pickSecretField(parsed as Record<string, unknown>, key, describe);
}
