import { AppError, CommonErrors } from '@switchboard/common';
import { AWS_AUTH_TYPES, AwsSecretsManagerAuthConfig } from './managers/aws-secrets-manager.client';
import { AZURE_AUTH_MODES, AzureKeyVaultAuthConfig } from './managers/azure-key-vault.client';
import {
  SECRET_MANAGER_TYPES,
  SecretManagerType,
  isSecretManagerType,
} from './managers/secret-manager.types';
import { VAULT_AUTH_TYPES, VaultAuthConfig } from './managers/vault.client';

export type SecretAuthConfig = VaultAuthConfig | AwsSecretsManagerAuthConfig | AzureKeyVaultAuthConfig;

/** What a secret reference needs to be read: the manager, how to log in, and where the secret is. */
export interface SecretReferenceConfig {
  managerType: SecretManagerType;
  authConfig: SecretAuthConfig;
  secretPath: string;
  secretKey: string | null;
}

export interface SecretReferenceConfigInput {
  managerType: unknown;
  authConfig: unknown;
  secretPath: unknown;
  secretKey?: unknown;
}

/** Fields holding a credential: encrypt them at rest (the whole auth config, in practice) and mask them on reads. */
export const SECRET_AUTH_SENSITIVE_FIELDS: ReadonlySet<string> = new Set([
  'vault_token',
  'vault_secret_id',
  'aws_secret_access_key',
  'aws_session_token',
  'azure_entra_client_secret',
]);

type Check = (value: string, param: string) => string;

interface ManagerSchema {
  discriminator: string;
  types: readonly string[];
  /** Fields every auth type of this manager accepts. */
  common: readonly string[];
  /** Per auth type: required fields and further optional ones. */
  byType: Record<string, { required: readonly string[]; optional: readonly string[] }>;
  checks: Record<string, Check>;
}

/** Control characters (C0 and DEL) have no place in a credential, a path or a URL. */
const CONTROL = {
  test: (value: string) => [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
};
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function invalid(param: string, message: string, rule: string): AppError {
  return CommonErrors.validation(`${param} ${message} (rule: ${rule})`, param);
}

function text(max: number): Check {
  return (value, param) => {
    if (value.length > max) throw invalid(param, `must be at most ${max} characters`, 'maxLength');
    return value;
  };
}

function pattern(regex: RegExp, description: string, max = 255): Check {
  return (value, param) => {
    const trimmed = value.trim();
    if (trimmed.length > max) throw invalid(param, `must be at most ${max} characters`, 'maxLength');
    if (!regex.test(trimmed)) throw invalid(param, `must be ${description}`, 'matches');
    return trimmed;
  };
}

/** A secret is kept byte for byte; only what can never be part of one is refused. */
function secret(max: number): Check {
  return (value, param) => {
    if (value.length > max) throw invalid(param, `must be at most ${max} characters`, 'maxLength');
    if (value.trim() !== value) {
      throw invalid(param, 'must not start or end with whitespace', 'noSurroundingWhitespace');
    }
    return value;
  };
}

function url(options: { allowPath: boolean }): Check {
  return (value, param) => {
    const trimmed = value.trim();
    if (trimmed.length > 2048) throw invalid(param, 'must be at most 2048 characters', 'maxLength');
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      throw invalid(param, 'must be an absolute http or https URL', 'isUrl');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw invalid(param, 'must be an absolute http or https URL', 'isUrl');
    }
    if (parsed.username || parsed.password) {
      throw invalid(param, 'must not carry credentials in the URL', 'noUserInfo');
    }
    if (parsed.search || parsed.hash) {
      throw invalid(param, 'must not have a query string or fragment', 'noQuery');
    }
    const path = parsed.pathname.replace(/\/+$/, '');
    if (path && !options.allowPath) throw invalid(param, 'must not have a path', 'noPath');
    return `${parsed.origin}${path}`;
  };
}

/** Vault mount and namespace paths: segments of letters, digits, `_`, `-`, `.`. */
const vaultPath: Check = (value, param) => {
  const trimmed = value.trim().replace(/^\/+|\/+$/g, '');
  if (trimmed.length === 0) throw invalid(param, 'must not be empty', 'isNotEmpty');
  if (trimmed.length > 255) throw invalid(param, 'must be at most 255 characters', 'maxLength');
  if (
    !/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(trimmed) ||
    trimmed.split('/').some((s) => /^\.+$/.test(s))
  ) {
    throw invalid(param, "must be a path of segments made of letters, digits, '_', '-' and '.'", 'matches');
  }
  return trimmed;
};

const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

const SCHEMAS: Record<SecretManagerType, ManagerSchema> = {
  hashicorp_vault: {
    discriminator: 'vault_auth_type',
    types: VAULT_AUTH_TYPES,
    common: ['vault_addr', 'vault_namespace', 'vault_mount'],
    byType: {
      token: { required: ['vault_addr', 'vault_token'], optional: [] },
      approle: {
        required: ['vault_addr', 'vault_role_id', 'vault_secret_id'],
        optional: ['vault_auth_mount'],
      },
      kubernetes: { required: ['vault_addr', 'vault_role'], optional: ['vault_auth_mount'] },
    },
    checks: {
      vault_addr: url({ allowPath: true }),
      vault_namespace: vaultPath,
      vault_mount: vaultPath,
      vault_auth_mount: vaultPath,
      vault_token: secret(4096),
      vault_role_id: pattern(/^\S+$/, 'a role id without whitespace'),
      vault_secret_id: secret(4096),
      vault_role: pattern(/^[A-Za-z0-9_.@-]+$/, "a role name of letters, digits, '_', '-', '.', '@'"),
    },
  },
  aws_sm: {
    discriminator: 'aws_auth_type',
    types: AWS_AUTH_TYPES,
    common: ['aws_region', 'aws_endpoint'],
    byType: {
      accessKey: {
        required: ['aws_access_key_id', 'aws_secret_access_key', 'aws_region'],
        optional: ['aws_session_token'],
      },
      assumedRole: {
        required: ['aws_role_arn', 'aws_region'],
        optional: [
          'aws_external_id',
          'aws_access_key_id',
          'aws_secret_access_key',
          'aws_session_token',
          'aws_sts_endpoint',
        ],
      },
      serviceRole: { required: [], optional: [] },
    },
    checks: {
      aws_region: pattern(AWS_REGION, 'an AWS region such as us-east-1', 32),
      aws_endpoint: url({ allowPath: false }),
      aws_sts_endpoint: url({ allowPath: false }),
      aws_access_key_id: pattern(
        /^[A-Z0-9]{16,128}$/,
        'an AWS access key id (16-128 upper-case letters and digits)',
        128,
      ),
      aws_secret_access_key: secret(128),
      aws_session_token: secret(8192),
      aws_role_arn: pattern(
        /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/,
        'an IAM role ARN such as arn:aws:iam::123456789012:role/name',
        2048,
      ),
      aws_external_id: pattern(
        /^[\w+=,.@:/-]{2,1224}$/,
        "2-1224 characters of letters, digits and '+=,.@:/-'",
        1224,
      ),
    },
  },
  azure_kv: {
    discriminator: 'azure_auth_mode',
    types: AZURE_AUTH_MODES,
    common: ['azure_vault_url'],
    byType: {
      entra: {
        required: [
          'azure_entra_tenant_id',
          'azure_entra_client_id',
          'azure_entra_client_secret',
          'azure_vault_url',
        ],
        optional: ['azure_authority_host'],
      },
      managed: { required: ['azure_vault_url'], optional: ['azure_managed_client_id'] },
      default: { required: ['azure_vault_url'], optional: ['azure_authority_host'] },
    },
    checks: {
      azure_vault_url: url({ allowPath: false }),
      azure_authority_host: url({ allowPath: false }),
      azure_entra_tenant_id: pattern(
        /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$/,
        'a tenant id (GUID) or a verified domain name',
      ),
      azure_entra_client_id: pattern(GUID, 'an application (client) id GUID'),
      azure_entra_client_secret: secret(1024),
      azure_managed_client_id: pattern(GUID, 'a managed identity client id GUID'),
    },
  },
};

function knownFields(schema: ManagerSchema): Set<string> {
  const fields = new Set<string>([schema.discriminator, ...schema.common]);
  for (const entry of Object.values(schema.byType)) {
    for (const field of [...entry.required, ...entry.optional]) fields.add(field);
  }
  return fields;
}

function asRecord(value: unknown, param: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(param, 'must be an object', 'isObject');
  }
  return value as Record<string, unknown>;
}

export function validateManagerType(value: unknown, param = 'manager_type'): SecretManagerType {
  if (value === undefined || value === null || value === '')
    throw invalid(param, 'is required', 'isNotEmpty');
  if (!isSecretManagerType(value)) {
    throw invalid(param, `must be one of ${SECRET_MANAGER_TYPES.join(', ')}`, 'isIn');
  }
  return value;
}

/**
 * Checks an `auth_config` for a manager type and answers its normalised form (trimmed
 * identifiers, URLs without a trailing slash, no empty optional fields). Throws a 400 AppError
 * naming the field (`auth_config.<field>`) and the rule.
 */
export function validateSecretAuthConfig(
  managerType: SecretManagerType,
  authConfig: unknown,
): SecretAuthConfig {
  const raw = asRecord(authConfig, 'auth_config');
  const schema = SCHEMAS[managerType];
  const known = knownFields(schema);
  const discriminatorParam = `auth_config.${schema.discriminator}`;
  const type = raw[schema.discriminator];
  if (type === undefined || type === null || type === '') {
    throw invalid(discriminatorParam, `is required for manager_type ${managerType}`, 'isNotEmpty');
  }
  if (typeof type !== 'string' || !schema.types.includes(type)) {
    throw invalid(discriminatorParam, `must be one of ${schema.types.join(', ')}`, 'isIn');
  }
  const entry = schema.byType[type];
  const allowed = new Set([schema.discriminator, ...schema.common, ...entry.required, ...entry.optional]);
  const out: Record<string, string> = { [schema.discriminator]: type };
  for (const [field, value] of Object.entries(raw)) {
    if (field === schema.discriminator) continue;
    const param = `auth_config.${field}`;
    if (!known.has(field)) {
      throw invalid(param, `is not a field of a ${managerType} auth config`, 'whitelistValidation');
    }
    if (!allowed.has(field)) {
      throw invalid(param, `is not used when ${schema.discriminator} is '${type}'`, 'whitelistValidation');
    }
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw invalid(param, 'must be a string', 'isString');
    if (value.trim() === '') {
      if (entry.required.includes(field)) throw invalid(param, 'must not be empty', 'isNotEmpty');
      continue;
    }
    if (CONTROL.test(value))
      throw invalid(param, 'must not contain control characters', 'noControlCharacters');
    out[field] = (schema.checks[field] ?? text(255))(value, param);
  }
  for (const field of entry.required) {
    if (out[field] === undefined) {
      throw invalid(
        `auth_config.${field}`,
        `is required when ${schema.discriminator} is '${type}'`,
        'isNotEmpty',
      );
    }
  }
  if (managerType === 'aws_sm' && type === 'assumedRole') {
    const hasId = out.aws_access_key_id !== undefined;
    const hasSecret = out.aws_secret_access_key !== undefined;
    if (hasId !== hasSecret) {
      const missing = hasId ? 'aws_secret_access_key' : 'aws_access_key_id';
      throw invalid(
        `auth_config.${missing}`,
        'is required when the other half of the source access key is given',
        'isNotEmpty',
      );
    }
  }
  if (out.aws_session_token !== undefined && out.aws_access_key_id === undefined) {
    throw invalid(
      'auth_config.aws_session_token',
      'needs aws_access_key_id and aws_secret_access_key',
      'dependsOn',
    );
  }
  return out as unknown as SecretAuthConfig;
}

/**
 * Checks where the secret lives for a manager type: `secret_path` (Vault: a path inside the KV
 * mount; AWS: a secret name or ARN; Azure: a secret name, optionally `name/version`) and the
 * optional `secret_key`.
 */
export function validateSecretLocation(
  managerType: SecretManagerType,
  secretPath: unknown,
  secretKey?: unknown,
): { secretPath: string; secretKey: string | null } {
  if (secretPath === undefined || secretPath === null)
    throw invalid('secret_path', 'is required', 'isNotEmpty');
  if (typeof secretPath !== 'string') throw invalid('secret_path', 'must be a string', 'isString');
  let path = secretPath.trim();
  if (path === '') throw invalid('secret_path', 'must not be empty', 'isNotEmpty');
  if (path.length > 1024) throw invalid('secret_path', 'must be at most 1024 characters', 'maxLength');
  if (CONTROL.test(path))
    throw invalid('secret_path', 'must not contain control characters', 'noControlCharacters');
  if (managerType === 'hashicorp_vault') {
    path = path.replace(/^\/+|\/+$/g, '');
    const segments = path.split('/');
    if (path === '' || segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
      throw invalid('secret_path', "must be a path of non-empty segments without '.' or '..'", 'matches');
    }
    if (/[?#]/.test(path)) throw invalid('secret_path', "must not contain '?' or '#'", 'matches');
  } else if (managerType === 'aws_sm') {
    if (!/^[A-Za-z0-9/_+=.@:-]+$/.test(path)) {
      throw invalid(
        'secret_path',
        "must be a secret name or ARN (letters, digits and '/_+=.@-:')",
        'matches',
      );
    }
  } else if (!/^[0-9A-Za-z-]{1,127}(\/[0-9A-Fa-f]{32})?$/.test(path)) {
    throw invalid(
      'secret_path',
      "must be a Key Vault secret name (1-127 letters, digits and '-'), optionally followed by /<32-hex version>",
      'matches',
    );
  }
  let key: string | null = null;
  if (secretKey !== undefined && secretKey !== null) {
    if (typeof secretKey !== 'string') throw invalid('secret_key', 'must be a string', 'isString');
    if (secretKey === '')
      throw invalid('secret_key', 'must not be empty (use null for the whole secret)', 'isNotEmpty');
    if (secretKey.length > 255) throw invalid('secret_key', 'must be at most 255 characters', 'maxLength');
    if (CONTROL.test(secretKey)) {
      throw invalid('secret_key', 'must not contain control characters', 'noControlCharacters');
    }
    key = secretKey;
  }
  return { secretPath: path, secretKey: key };
}

/** The whole of a create request's manager fields, checked and normalised. */
export function validateSecretReferenceConfig(input: SecretReferenceConfigInput): SecretReferenceConfig {
  const managerType = validateManagerType(input.managerType);
  const authConfig = validateSecretAuthConfig(managerType, input.authConfig);
  return {
    managerType,
    authConfig,
    ...validateSecretLocation(managerType, input.secretPath, input.secretKey),
  };
}

/**
 * An update's `auth_config` is merged into the stored one and validated against the stored
 * manager type. A `null` in the patch removes an optional field. Fields of the stored config that
 * the (possibly new) auth type does not use are dropped; the same fields in the patch are refused.
 */
export function mergeSecretAuthConfig(
  managerType: SecretManagerType,
  existing: Record<string, unknown>,
  patch: unknown,
): SecretAuthConfig {
  const changes = asRecord(patch, 'auth_config');
  const schema = SCHEMAS[managerType];
  const known = knownFields(schema);
  for (const field of Object.keys(changes)) {
    if (!known.has(field)) {
      throw invalid(
        `auth_config.${field}`,
        `is not a field of a ${managerType} auth config`,
        'whitelistValidation',
      );
    }
  }
  const type = (changes[schema.discriminator] ?? existing[schema.discriminator]) as unknown;
  const entry = typeof type === 'string' ? schema.byType[type] : undefined;
  const allowed = entry
    ? new Set([schema.discriminator, ...schema.common, ...entry.required, ...entry.optional])
    : known;
  const merged: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(existing)) {
    if (allowed.has(field)) merged[field] = value;
  }
  const masked = maskSecretAuthConfig(existing);
  for (const [field, value] of Object.entries(changes)) {
    if (value === null) delete merged[field];
    // A client that sends back the masked value it was shown means "unchanged".
    else if (SECRET_AUTH_SENSITIVE_FIELDS.has(field) && value === masked[field] && field in existing)
      continue;
    else merged[field] = value;
  }
  return validateSecretAuthConfig(managerType, merged);
}

/** A copy safe to show: credentials replaced by a mask that keeps at most their last 4 characters. */
export function maskSecretAuthConfig(authConfig: Record<string, unknown>): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(authConfig)) {
    if (SECRET_AUTH_SENSITIVE_FIELDS.has(field) && typeof value === 'string') {
      masked[field] = value.length >= 16 ? `********${value.slice(-4)}` : '********';
    } else {
      masked[field] = value;
    }
  }
  return masked;
}
