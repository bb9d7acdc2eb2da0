import { AppError } from '@switchboard/common';
import {
  maskSecretAuthConfig,
  mergeSecretAuthConfig,
  validateSecretAuthConfig,
  validateSecretLocation,
  validateSecretReferenceConfig,
} from './secret-reference.config';

function rejection(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a validation error');
}

const GUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('secret reference configuration', () => {
  it('normalises a Vault token config: trailing slash, trimmed mount and namespace', () => {
    expect(
      validateSecretAuthConfig('hashicorp_vault', {
        vault_auth_type: 'token',
        vault_addr: ' https://vault.example.com:8200/ ',
        vault_token: 'hvs.abc',
        vault_namespace: '/team-a/',
        vault_mount: 'kv/',
      }),
    ).toEqual({
      vault_auth_type: 'token',
      vault_addr: 'https://vault.example.com:8200',
      vault_token: 'hvs.abc',
      vault_namespace: 'team-a',
      vault_mount: 'kv',
    });
  });

  it('names the field and rule of every problem', () => {
    const cases: [() => unknown, string, RegExp][] = [
      [
        () => validateSecretReferenceConfig({ managerType: 'gcp_sm', authConfig: {}, secretPath: 'x' }),
        'manager_type',
        /must be one of aws_sm, azure_kv, hashicorp_vault \(rule: isIn\)/,
      ],
      [() => validateSecretAuthConfig('hashicorp_vault', 'token'), 'auth_config', /must be an object/],
      [
        () => validateSecretAuthConfig('hashicorp_vault', { vault_addr: 'https://v' }),
        'auth_config.vault_auth_type',
        /is required/,
      ],
      [
        () => validateSecretAuthConfig('hashicorp_vault', { vault_auth_type: 'ldap' }),
        'auth_config.vault_auth_type',
        /must be one of token, approle, kubernetes/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', { vault_auth_type: 'token', vault_addr: 'https://v' }),
        'auth_config.vault_token',
        /is required when vault_auth_type is 'token' \(rule: isNotEmpty\)/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'ftp://v',
            vault_token: 't',
          }),
        'auth_config.vault_addr',
        /http or https URL \(rule: isUrl\)/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'https://u:p@v',
            vault_token: 't',
          }),
        'auth_config.vault_addr',
        /credentials/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'https://v',
            vault_token: 't',
            vault_secret_id: 's',
          }),
        'auth_config.vault_secret_id',
        /is not used when vault_auth_type is 'token'/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'https://v',
            vault_token: 't',
            aws_region: 'us-east-1',
          }),
        'auth_config.aws_region',
        /is not a field of a hashicorp_vault auth config \(rule: whitelistValidation\)/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'https://v',
            vault_token: ' t ',
          }),
        'auth_config.vault_token',
        /whitespace/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'https://v',
            vault_token: 12,
          }),
        'auth_config.vault_token',
        /must be a string \(rule: isString\)/,
      ],
      [
        () =>
          validateSecretAuthConfig('hashicorp_vault', {
            vault_auth_type: 'token',
            vault_addr: 'https://v',
            vault_token: 't',
            vault_mount: '../sys',
          }),
        'auth_config.vault_mount',
        /segments/,
      ],
      [
        () =>
          validateSecretAuthConfig('aws_sm', {
            aws_auth_type: 'accessKey',
            aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
            aws_secret_access_key: 's',
          }),
        'auth_config.aws_region',
        /is required/,
      ],
      [
        () =>
          validateSecretAuthConfig('aws_sm', {
            aws_auth_type: 'accessKey',
            aws_access_key_id: 'akia',
            aws_secret_access_key: 's',
            aws_region: 'us-east-1',
          }),
        'auth_config.aws_access_key_id',
        /access key id/,
      ],
      [
        () => validateSecretAuthConfig('aws_sm', { aws_auth_type: 'serviceRole', aws_region: 'US East' }),
        'auth_config.aws_region',
        /AWS region/,
      ],
      [
        () =>
          validateSecretAuthConfig('aws_sm', {
            aws_auth_type: 'assumedRole',
            aws_role_arn: 'role/x',
            aws_region: 'us-east-1',
          }),
        'auth_config.aws_role_arn',
        /IAM role ARN/,
      ],
      [
        () =>
          validateSecretAuthConfig('aws_sm', {
            aws_auth_type: 'assumedRole',
            aws_role_arn: 'arn:aws:iam::123456789012:role/r',
            aws_region: 'us-east-1',
            aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
          }),
        'auth_config.aws_secret_access_key',
        /other half/,
      ],
      [
        () =>
          validateSecretAuthConfig('aws_sm', {
            aws_auth_type: 'serviceRole',
            aws_endpoint: 'https://sm.local/path',
          }),
        'auth_config.aws_endpoint',
        /must not have a path/,
      ],
      [
        () =>
          validateSecretAuthConfig('azure_kv', {
            azure_auth_mode: 'entra',
            azure_entra_tenant_id: GUID,
            azure_entra_client_id: 'app',
            azure_entra_client_secret: 's',
            azure_vault_url: 'https://kv.vault.azure.net',
          }),
        'auth_config.azure_entra_client_id',
        /GUID/,
      ],
      [
        () => validateSecretAuthConfig('azure_kv', { azure_auth_mode: 'managed' }),
        'auth_config.azure_vault_url',
        /is required when azure_auth_mode is 'managed'/,
      ],
      [() => validateSecretLocation('hashicorp_vault', 'a/../b'), 'secret_path', /'\.\.'/],
      [() => validateSecretLocation('hashicorp_vault', ''), 'secret_path', /must not be empty/],
      [() => validateSecretLocation('aws_sm', 'prod secret'), 'secret_path', /secret name or ARN/],
      [() => validateSecretLocation('azure_kv', 'my_secret'), 'secret_path', /Key Vault secret name/],
      [() => validateSecretLocation('azure_kv', 'x'.repeat(1025)), 'secret_path', /at most 1024/],
      [() => validateSecretLocation('aws_sm', 'prod/x', ''), 'secret_key', /must not be empty/],
      [() => validateSecretLocation('aws_sm', 'prod/x', 'k'.repeat(256)), 'secret_key', /at most 255/],
    ];
    for (const [fn, param, message] of cases) {
      const error = rejection(fn);
      expect({ param: error.param, status: error.status, code: error.code }).toEqual({
        param,
        status: 400,
        code: 'invalid_request',
      });
      expect(error.message).toMatch(message);
      expect(error.message.startsWith(param)).toBe(true);
    }
  });

  it('accepts each auth type of the reference with its required fields', () => {
    expect(
      validateSecretReferenceConfig({
        managerType: 'aws_sm',
        authConfig: {
          aws_auth_type: 'assumedRole',
          aws_role_arn: 'arn:aws:iam::123456789012:role/gw',
          aws_external_id: 'ext-1',
          aws_region: 'eu-west-1',
        },
        secretPath: ' prod/api-keys/openai ',
        secretKey: 'api_key',
      }),
    ).toEqual({
      managerType: 'aws_sm',
      authConfig: {
        aws_auth_type: 'assumedRole',
        aws_role_arn: 'arn:aws:iam::123456789012:role/gw',
        aws_external_id: 'ext-1',
        aws_region: 'eu-west-1',
      },
      secretPath: 'prod/api-keys/openai',
      secretKey: 'api_key',
    });
    expect(validateSecretAuthConfig('aws_sm', { aws_auth_type: 'serviceRole' })).toEqual({
      aws_auth_type: 'serviceRole',
    });
    expect(
      validateSecretAuthConfig('azure_kv', {
        azure_auth_mode: 'default',
        azure_vault_url: 'https://kv.vault.azure.net/',
      }),
    ).toEqual({ azure_auth_mode: 'default', azure_vault_url: 'https://kv.vault.azure.net' });
    expect(
      validateSecretAuthConfig('hashicorp_vault', {
        vault_auth_type: 'kubernetes',
        vault_addr: 'http://vault:8200',
        vault_role: 'gw',
      }),
    ).toMatchObject({ vault_role: 'gw' });
    expect(validateSecretLocation('hashicorp_vault', '/llm/openai/', null)).toEqual({
      secretPath: 'llm/openai',
      secretKey: null,
    });
    expect(validateSecretLocation('azure_kv', 'openai-key/0123456789abcdef0123456789abcdef')).toEqual({
      secretPath: 'openai-key/0123456789abcdef0123456789abcdef',
      secretKey: null,
    });
  });

  it('merges an update into the stored config: null removes, a new auth type drops the old fields', () => {
    const stored = {
      vault_auth_type: 'token',
      vault_addr: 'https://v',
      vault_token: 'hvs.secret-token-value',
      vault_namespace: 'a',
    };
    expect(mergeSecretAuthConfig('hashicorp_vault', stored, { vault_namespace: null })).toEqual({
      vault_auth_type: 'token',
      vault_addr: 'https://v',
      vault_token: 'hvs.secret-token-value',
    });
    expect(
      mergeSecretAuthConfig('hashicorp_vault', stored, {
        vault_auth_type: 'approle',
        vault_role_id: 'r',
        vault_secret_id: 's',
      }),
    ).toEqual({
      vault_auth_type: 'approle',
      vault_addr: 'https://v',
      vault_namespace: 'a',
      vault_role_id: 'r',
      vault_secret_id: 's',
    });
    // The masked value a client was shown means "keep the stored one".
    const masked = maskSecretAuthConfig(stored);
    expect(masked.vault_token).toBe('********alue');
    expect(
      mergeSecretAuthConfig('hashicorp_vault', stored, { vault_token: masked.vault_token }),
    ).toMatchObject({
      vault_token: 'hvs.secret-token-value',
    });
    expect(rejection(() => mergeSecretAuthConfig('hashicorp_vault', stored, { aws_region: 'x' })).param).toBe(
      'auth_config.aws_region',
    );
    expect(
      rejection(() => mergeSecretAuthConfig('hashicorp_vault', stored, { vault_auth_type: 'approle' })).param,
    ).toBe('auth_config.vault_role_id');
  });

  it('masks every credential field and nothing else', () => {
    expect(
      maskSecretAuthConfig({
        aws_auth_type: 'accessKey',
        aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        aws_secret_access_key: 'short',
        aws_region: 'us-east-1',
      }),
    ).toEqual({
      aws_auth_type: 'accessKey',
      aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      aws_secret_access_key: '********',
      aws_region: 'us-east-1',
    });
  });
});
