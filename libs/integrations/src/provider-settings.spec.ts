import { generateKeyPairSync } from 'node:crypto';
import { AppError } from '@switchboard/common';
import {
  SettingsContext,
  canonicalProvider,
  deploymentForModel,
  maskSettings,
  settingsToCredentials,
  validateSettings,
} from './provider-settings';

const integration = (overrides: Partial<SettingsContext> = {}): SettingsContext => ({
  paramPrefix: 'configurations',
  camel: false,
  hasKey: true,
  mappedFields: new Set(),
  strictDeployments: true,
  ...overrides,
});

function problem(run: () => unknown): { param: string | null; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return { param: error.param, message: error.message };
    throw error;
  }
  throw new Error('expected a validation error');
}

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 1024,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

describe('provider names', () => {
  it('are the adapters ids, aliases folded', () => {
    expect(canonicalProvider('open-ai', 'p')).toBe('openai');
    expect(canonicalProvider('Azure', 'p')).toBe('azure-openai');
    expect(problem(() => canonicalProvider('nope', 'ai_provider_id'))).toMatchObject({
      param: 'ai_provider_id',
    });
  });
});

describe('validateSettings', () => {
  it('splits secret fields from plain ones', () => {
    const split = validateSettings(
      'bedrock',
      { aws_region: 'us-east-1', aws_access_key_id: 'AKIA', aws_secret_access_key: 'secret' },
      integration({ hasKey: false }),
    );
    expect(split).toEqual({
      plain: { aws_region: 'us-east-1' },
      secret: { aws_access_key_id: 'AKIA', aws_secret_access_key: 'secret' },
    });
  });

  it('names the field and rule of every problem', () => {
    expect(
      problem(() => validateSettings('openai', { azure_resource_name: 'x' }, integration())),
    ).toMatchObject({
      param: 'configurations.azure_resource_name',
      message: expect.stringContaining('rule: whitelistValidation'),
    });
    expect(
      problem(() =>
        validateSettings(
          'azure-openai',
          { azure_resource_name: 'r', azure_auth_mode: 'magic' },
          integration(),
        ),
      ),
    ).toMatchObject({
      param: 'configurations.azure_auth_mode',
      message: expect.stringContaining('rule: isIn'),
    });
    expect(
      problem(() =>
        validateSettings(
          'azure-openai',
          {
            azure_resource_name: 'r',
            azure_deployment_config: [
              { azure_api_version: 'v', azure_deployment_name: 'a', azure_model_slug: 'm', is_default: true },
              { azure_api_version: 'v', azure_deployment_name: 'b', azure_model_slug: 'm', is_default: true },
            ],
          },
          integration(),
        ),
      ),
    ).toMatchObject({
      param: 'configurations.azure_deployment_config',
      message: expect.stringContaining('singleDefault'),
    });
    // Integrations name the model of each deployment; virtual keys need not.
    expect(
      problem(() =>
        validateSettings(
          'azure-openai',
          {
            azure_resource_name: 'r',
            azure_deployment_config: [{ azure_api_version: 'v', azure_deployment_name: 'a' }],
          },
          integration(),
        ),
      ),
    ).toMatchObject({ param: 'configurations.azure_deployment_config[0].azure_model_slug' });
    expect(
      validateSettings(
        'azure-openai',
        {
          azure_resource_name: 'r',
          azure_deployment_config: [{ azure_api_version: 'v', azure_deployment_name: 'a' }],
        },
        integration({ paramPrefix: '', camel: true, strictDeployments: false }),
      ).plain.azure_deployment_config,
    ).toEqual([{ azure_api_version: 'v', azure_deployment_name: 'a' }]);
  });

  it('virtual keys are told the camelCase name', () => {
    expect(
      problem(() =>
        validateSettings(
          'bedrock',
          { aws_access_key_id: 'a', aws_secret_access_key: 'b' },
          integration({ paramPrefix: '', camel: true }),
        ),
      ),
    ).toMatchObject({ param: 'awsRegion' });
  });

  it('a secret mapping stands in for a required field and for the key', () => {
    expect(() =>
      validateSettings(
        'bedrock',
        { aws_region: 'us-east-1', aws_access_key_id: 'a' },
        integration({ mappedFields: new Set(['aws_secret_access_key']) }),
      ),
    ).not.toThrow();
    expect(problem(() => validateSettings('openai', {}, integration({ hasKey: false })))).toMatchObject({
      param: 'key',
    });
    expect(() => validateSettings('ollama', {}, integration({ hasKey: false }))).not.toThrow();
    expect(() =>
      validateSettings('openai', { custom_host: 'http://10.0.0.1:8000/v1' }, integration({ hasKey: false })),
    ).not.toThrow();
  });

  it('providers whose host holds an account need it', () => {
    expect(problem(() => validateSettings('workers-ai', {}, integration()))).toMatchObject({
      param: 'configurations.workers_ai_account_id',
    });
    expect(problem(() => validateSettings('predibase', {}, integration()))).toMatchObject({
      param: 'configurations.custom_host',
    });
  });

  it('custom headers must be valid single-line headers', () => {
    expect(
      problem(() => validateSettings('openai', { custom_headers: { 'bad header': 'x' } }, integration())),
    ).toMatchObject({
      param: 'configurations.custom_headers.bad header',
    });
    expect(
      problem(() =>
        validateSettings('openai', { custom_headers: { 'x-a': 'line\r\nInjected: 1' } }, integration()),
      ),
    ).toMatchObject({
      param: 'configurations.custom_headers.x-a',
    });
  });

  it('a service account needs an e-mail and a parseable private key, and names a project', () => {
    const account = {
      type: 'service_account',
      client_email: 'sa@p.iam.gserviceaccount.com',
      private_key: privateKey,
    };
    expect(
      problem(() =>
        validateSettings(
          'vertex-ai',
          { vertex_region: 'r', vertex_service_account_json: account },
          integration(),
        ),
      ),
    ).toMatchObject({
      param: 'configurations.vertex_project_id',
    });
    expect(
      validateSettings(
        'vertex-ai',
        { vertex_region: 'r', vertex_service_account_json: { ...account, project_id: 'p' } },
        integration({ hasKey: false }),
      ).secret,
    ).toHaveProperty('vertex_service_account_json');
  });
});

describe('settingsToCredentials', () => {
  it('maps every provider family to the adapter credentials', () => {
    expect(
      settingsToCredentials('openai', { openai_organization: 'o', custom_host: 'http://h' }, 'k'),
    ).toEqual({
      apiKey: 'k',
      customHost: 'http://h',
      openaiOrganization: 'o',
    });
    expect(
      settingsToCredentials(
        'azure-openai',
        {
          azure_resource_name: 'r',
          azure_deployment_config: [
            { azure_api_version: '1', azure_deployment_name: 'a' },
            { azure_api_version: '2', azure_deployment_name: 'b', is_default: true },
          ],
        },
        'k',
      ),
    ).toEqual({ apiKey: 'k', azureResourceName: 'r', azureDeploymentId: 'b', azureApiVersion: '2' });
    expect(
      settingsToCredentials('vertex-ai', { vertex_project_id: 'p', vertex_region: 'r' }, 'ya29.t'),
    ).toEqual({
      apiKey: 'ya29.t',
      vertexProjectId: 'p',
      vertexRegion: 'r',
      vertexAccessToken: 'ya29.t',
    });
    expect(settingsToCredentials('workers-ai', { workers_ai_account_id: 'acc' }, 'k').customHost).toBe(
      'https://api.cloudflare.com/client/v4/accounts/acc/ai/v1',
    );
  });

  it('picks Azure deployments by alias, model, then name', () => {
    const deployments = [
      { azure_api_version: '1', azure_deployment_name: 'd1', azure_model_slug: 'gpt-4o', alias: 'fast' },
      { azure_api_version: '1', azure_deployment_name: 'gpt-4o', azure_model_slug: 'gpt-4o-mini' },
    ];
    expect(deploymentForModel(deployments, 'fast')?.azure_deployment_name).toBe('d1');
    expect(deploymentForModel(deployments, 'gpt-4o')?.azure_deployment_name).toBe('d1');
    expect(deploymentForModel(deployments, 'gpt-4o-mini')?.azure_deployment_name).toBe('gpt-4o');
    expect(deploymentForModel(deployments, 'other')).toBeUndefined();
  });
});

describe('maskSettings', () => {
  it('answers secrets only masked', () => {
    expect(
      maskSettings({
        aws_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        custom_headers: { 'x-proxy-key': 'proxy-secret-value-123456' },
      }),
    ).toEqual({
      masked_aws_secret_access_key: 'wJa...EKEY',
      masked_custom_headers: { 'x-proxy-key': 'pro...3456' },
    });
    expect(maskSettings({ aws_secret_access_key: 'short-secret' }, true)).toEqual({
      masked_awsSecretAccessKey: '...et',
    });
  });
});
