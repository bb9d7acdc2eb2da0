import { readFileSync } from 'node:fs';
import { AwsSecretsManagerAuthConfig, AwsSecretsManagerClient } from './aws-secrets-manager.client';
import { AzureKeyVaultAuthConfig, AzureKeyVaultClient } from './azure-key-vault.client';
import {
  SecretManagerClient,
  SecretManagerEnvironment,
  SecretManagerError,
  SecretManagerType,
} from './secret-manager.types';
import { VaultAuthConfig, VaultClient } from './vault.client';

export const DEFAULT_SECRET_MANAGER_TIMEOUT_MS = 10_000;

export function defaultSecretManagerEnvironment(
  overrides: Partial<SecretManagerEnvironment> = {},
): SecretManagerEnvironment {
  return {
    env: process.env,
    readFile: (path: string) => readFileSync(path, 'utf8'),
    requestTimeoutMs: DEFAULT_SECRET_MANAGER_TIMEOUT_MS,
    ...overrides,
  };
}

/**
 * The client for one reference's manager and auth config. Clients cache login tokens and
 * temporary credentials, so callers keep one per configuration (the resolver does).
 */
export function createSecretManagerClient(
  managerType: SecretManagerType,
  authConfig: Record<string, unknown>,
  environment: SecretManagerEnvironment = defaultSecretManagerEnvironment(),
): SecretManagerClient {
  switch (managerType) {
    case 'hashicorp_vault':
      return new VaultClient(authConfig as unknown as VaultAuthConfig, environment);
    case 'aws_sm':
      return new AwsSecretsManagerClient(authConfig as unknown as AwsSecretsManagerAuthConfig, environment);
    case 'azure_kv':
      return new AzureKeyVaultClient(authConfig as unknown as AzureKeyVaultAuthConfig, environment);
    default:
      throw new SecretManagerError('invalid_config', `unknown manager_type '${String(managerType)}'`);
  }
}
