import { createPrivateKey } from 'node:crypto';
import { OPENAI_COMPATIBLE_PROVIDERS, ProviderCredentials, getProviderAdapter } from '@switchboard/providers';
import { IntegrationErrors } from './integrations.errors';
import { maskSecret } from './masking';

/**
 * Provider-specific configuration of integrations and virtual keys, validated per provider.
 *
 * Canonical names are the reference's integration `configurations` fields (snake_case);
 * virtual keys spell the same fields in camelCase at the top level of their body and under
 * `model_config` in answers (see CAMEL_FIELDS). Sensitive fields are sealed apart from the rest
 * and answered only masked, as `masked_<field>`.
 */

type FieldKind = 'string' | 'url' | 'enum' | 'deployments' | 'headers' | 'service_account' | 'arn';

interface FieldSpec {
  readonly kind: FieldKind;
  readonly secret?: boolean;
  readonly values?: readonly string[];
  readonly maxLength?: number;
}

const S: FieldSpec = { kind: 'string', maxLength: 1024 };
const SECRET: FieldSpec = { kind: 'string', secret: true, maxLength: 8192 };
const URL_FIELD: FieldSpec = { kind: 'url', maxLength: 2048 };
const AZURE_AUTH: FieldSpec = { kind: 'enum', values: ['default', 'entra', 'managed'] };

const COMMON: Readonly<Record<string, FieldSpec>> = {
  custom_host: URL_FIELD,
  // Headers often carry credentials (proxy keys), so they are sealed and masked like one.
  custom_headers: { kind: 'headers', secret: true },
};

const AZURE_ENTRA: Readonly<Record<string, FieldSpec>> = {
  azure_auth_mode: AZURE_AUTH,
  azure_entra_tenant_id: S,
  azure_entra_client_id: S,
  azure_entra_client_secret: SECRET,
  azure_managed_client_id: S,
  azure_entra_scope: S,
  /** Sovereign clouds (and tests) use another Entra ID authority than login.microsoftonline.com. */
  azure_authority_host: URL_FIELD,
};

const AWS: Readonly<Record<string, FieldSpec>> = {
  aws_auth_type: { kind: 'enum', values: ['accessKey', 'assumedRole'] },
  aws_region: { kind: 'string', maxLength: 64 },
  aws_access_key_id: { kind: 'string', secret: true, maxLength: 256 },
  aws_secret_access_key: SECRET,
  aws_session_token: SECRET,
  aws_role_arn: { kind: 'arn' },
  aws_external_id: S,
  /** VPC endpoints (and tests) reach STS elsewhere than sts.<region>.amazonaws.com. */
  aws_sts_endpoint: URL_FIELD,
};

const BY_PROVIDER: Readonly<Record<string, Readonly<Record<string, FieldSpec>>>> = {
  openai: { openai_organization: S, openai_project: S },
  anthropic: { anthropic_version: S, anthropic_beta: S },
  'azure-openai': {
    ...AZURE_ENTRA,
    azure_resource_name: { kind: 'string', maxLength: 255 },
    azure_deployment_config: { kind: 'deployments' },
  },
  bedrock: AWS,
  'vertex-ai': {
    vertex_auth_type: { kind: 'enum', values: ['basic', 'serviceAccount'] },
    vertex_region: { kind: 'string', maxLength: 64 },
    vertex_project_id: { kind: 'string', maxLength: 255 },
    vertex_service_account_json: { kind: 'service_account', secret: true },
  },
  'workers-ai': { workers_ai_account_id: { kind: 'string', maxLength: 255 } },
  'hugging-face': { huggingface_base_url: URL_FIELD },
};

/** Virtual keys' camelCase names for the canonical fields (reference examples). */
export const CAMEL_FIELDS: Readonly<Record<string, string>> = {
  customHost: 'custom_host',
  customHeaders: 'custom_headers',
  openaiOrganization: 'openai_organization',
  openaiProject: 'openai_project',
  anthropicVersion: 'anthropic_version',
  anthropicBeta: 'anthropic_beta',
  azureAuthMode: 'azure_auth_mode',
  resourceName: 'azure_resource_name',
  azureEntraTenantId: 'azure_entra_tenant_id',
  azureEntraClientId: 'azure_entra_client_id',
  azureEntraClientSecret: 'azure_entra_client_secret',
  azureManagedClientId: 'azure_managed_client_id',
  azureEntraScope: 'azure_entra_scope',
  azureAuthorityHost: 'azure_authority_host',
  awsAuthType: 'aws_auth_type',
  awsRegion: 'aws_region',
  awsAccessKeyId: 'aws_access_key_id',
  awsSecretAccessKey: 'aws_secret_access_key',
  awsSessionToken: 'aws_session_token',
  awsRoleArn: 'aws_role_arn',
  awsExternalId: 'aws_external_id',
  awsStsEndpoint: 'aws_sts_endpoint',
  vertexAuthType: 'vertex_auth_type',
  vertexRegion: 'vertex_region',
  vertexProjectId: 'vertex_project_id',
  vertexServiceAccountJson: 'vertex_service_account_json',
  workersAiAccountId: 'workers_ai_account_id',
  huggingfaceBaseUrl: 'huggingface_base_url',
};
const SNAKE_TO_CAMEL: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(CAMEL_FIELDS).map(([camel, snake]) => [snake, camel]),
);

export function camelFieldOf(snake: string): string {
  return SNAKE_TO_CAMEL[snake] ?? snake;
}

export function snakeFieldOf(camel: string): string | undefined {
  return CAMEL_FIELDS[camel];
}

export interface AzureDeployment {
  alias?: string;
  azure_api_version: string;
  azure_deployment_name: string;
  azure_model_slug?: string;
  is_default?: boolean;
}

export interface ServiceAccount {
  type?: string;
  project_id?: string;
  private_key_id?: string;
  private_key: string;
  client_email: string;
  token_uri?: string;
  [field: string]: unknown;
}

/** The canonical provider id of a name or alias, or the 400 naming the field. */
export function canonicalProvider(name: string, param: string): string {
  const adapter = getProviderAdapter(name);
  if (!adapter) throw IntegrationErrors.unknownProvider(name, param);
  return adapter.id;
}

export function fieldsOf(provider: string): Readonly<Record<string, FieldSpec>> {
  return { ...COMMON, ...(BY_PROVIDER[provider] ?? {}) };
}

export function isSecretField(provider: string, field: string): boolean {
  return fieldsOf(provider)[field]?.secret === true;
}

const COMPATIBLE = new Map(OPENAI_COMPATIBLE_PROVIDERS.map((provider) => [provider.id, provider]));

export interface SettingsContext {
  /** `configurations` (integrations) or '' (virtual keys: top-level camelCase fields). */
  readonly paramPrefix: string;
  /** Virtual keys name fields in camelCase. */
  readonly camel: boolean;
  /** The stored key or a mapping to `key` exists (after this write). */
  readonly hasKey: boolean;
  /** Canonical fields that a secret mapping will fill at run time. */
  readonly mappedFields: ReadonlySet<string>;
  /** Integrations follow the reference strictly (every deployment names its model). */
  readonly strictDeployments: boolean;
}

export interface SplitSettings {
  plain: Record<string, unknown>;
  secret: Record<string, unknown>;
}

function paramOf(context: SettingsContext, field: string): string {
  const name = context.camel ? camelFieldOf(field) : field;
  return context.paramPrefix ? `${context.paramPrefix}.${name}` : name;
}

function checkUrl(value: string, param: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw IntegrationErrors.invalidField(param, 'must be an absolute http(s) URL', 'isUrl');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw IntegrationErrors.invalidField(param, 'must be an absolute http(s) URL', 'isUrl');
  }
  return value.replace(/\/+$/, '');
}

function checkString(value: unknown, spec: FieldSpec, param: string): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw IntegrationErrors.invalidField(param, 'must be a non-empty string', 'isString');
  }
  if (spec.maxLength !== undefined && value.length > spec.maxLength) {
    throw IntegrationErrors.invalidField(param, `must be at most ${spec.maxLength} characters`, 'maxLength');
  }
  return value;
}

function checkDeployments(value: unknown, param: string, strict: boolean): AzureDeployment[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw IntegrationErrors.invalidField(param, 'must be a non-empty array of deployments', 'arrayMinSize');
  }
  if (value.length > 100)
    throw IntegrationErrors.invalidField(param, 'holds at most 100 deployments', 'arrayMaxSize');
  const allowed = new Set([
    'alias',
    'azure_api_version',
    'azure_deployment_name',
    'azure_model_slug',
    'is_default',
  ]);
  const deployments = value.map((raw, index): AzureDeployment => {
    const at = `${param}[${index}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      throw IntegrationErrors.invalidField(at, 'must be an object', 'isObject');
    }
    const entry = raw as Record<string, unknown>;
    for (const key of Object.keys(entry)) {
      if (!allowed.has(key))
        throw IntegrationErrors.invalidField(
          `${at}.${key}`,
          'is not a deployment field',
          'whitelistValidation',
        );
    }
    const version = checkString(
      entry.azure_api_version,
      { kind: 'string', maxLength: 30 },
      `${at}.azure_api_version`,
    );
    const name = checkString(
      entry.azure_deployment_name,
      { kind: 'string', maxLength: 255 },
      `${at}.azure_deployment_name`,
    );
    const deployment: AzureDeployment = { azure_api_version: version, azure_deployment_name: name };
    if (entry.azure_model_slug !== undefined || strict) {
      deployment.azure_model_slug = checkString(
        entry.azure_model_slug,
        { kind: 'string', maxLength: 255 },
        `${at}.azure_model_slug`,
      );
    }
    if (entry.alias !== undefined)
      deployment.alias = checkString(entry.alias, { kind: 'string', maxLength: 255 }, `${at}.alias`);
    if (entry.is_default !== undefined) {
      if (typeof entry.is_default !== 'boolean')
        throw IntegrationErrors.invalidField(`${at}.is_default`, 'must be a boolean', 'isBoolean');
      deployment.is_default = entry.is_default;
    }
    return deployment;
  });
  if (deployments.filter((deployment) => deployment.is_default).length > 1) {
    throw IntegrationErrors.invalidField(
      param,
      'may mark at most one deployment is_default',
      'singleDefault',
    );
  }
  return deployments;
}

function checkHeaders(value: unknown, param: string): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw IntegrationErrors.invalidField(
      param,
      'must be an object of header names to string values',
      'isObject',
    );
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 50)
    throw IntegrationErrors.invalidField(param, 'holds at most 50 headers', 'maxProperties');
  const headers: Record<string, string> = {};
  for (const [name, inner] of entries) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/.test(name)) {
      throw IntegrationErrors.invalidField(`${param}.${name}`, 'is not a valid header name', 'isHeaderName');
    }
    if (typeof inner !== 'string' || inner.length > 8192 || /[\r\n]/.test(inner)) {
      throw IntegrationErrors.invalidField(`${param}.${name}`, 'must be a single-line string', 'isString');
    }
    headers[name.toLowerCase()] = inner;
  }
  return headers;
}

function checkServiceAccount(value: unknown, param: string): ServiceAccount {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw IntegrationErrors.invalidField(
      param,
      'must be the service account key file as a JSON object',
      'isObject',
    );
  }
  const account = value as Record<string, unknown>;
  if (account.type !== undefined && account.type !== 'service_account') {
    throw IntegrationErrors.invalidField(`${param}.type`, "must be 'service_account'", 'equals');
  }
  if (typeof account.client_email !== 'string' || !account.client_email.includes('@')) {
    throw IntegrationErrors.invalidField(
      `${param}.client_email`,
      'must be the service account e-mail',
      'isEmail',
    );
  }
  if (typeof account.private_key !== 'string') {
    throw IntegrationErrors.invalidField(`${param}.private_key`, 'must be a PEM private key', 'isPem');
  }
  try {
    createPrivateKey(account.private_key);
  } catch {
    throw IntegrationErrors.invalidField(`${param}.private_key`, 'must be a PEM private key', 'isPem');
  }
  if (account.token_uri !== undefined) checkUrl(String(account.token_uri), `${param}.token_uri`);
  if (JSON.stringify(account).length > 20_000) {
    throw IntegrationErrors.invalidField(param, 'is too large for a service account key', 'maxLength');
  }
  return account as ServiceAccount;
}

function checkValue(
  field: string,
  spec: FieldSpec,
  value: unknown,
  param: string,
  context: SettingsContext,
): unknown {
  switch (spec.kind) {
    case 'string':
      return checkString(value, spec, param);
    case 'url':
      return checkUrl(checkString(value, spec, param), param);
    case 'enum':
      if (typeof value !== 'string' || !spec.values!.includes(value)) {
        throw IntegrationErrors.invalidField(param, `must be one of ${spec.values!.join(', ')}`, 'isIn');
      }
      return value;
    case 'arn': {
      const arn = checkString(value, { kind: 'string', maxLength: 2048 }, param);
      if (!/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/.test(arn)) {
        throw IntegrationErrors.invalidField(
          param,
          'must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)',
          'isArn',
        );
      }
      return arn;
    }
    case 'deployments':
      return checkDeployments(value, param, context.strictDeployments);
    case 'headers':
      return checkHeaders(value, param);
    case 'service_account':
      return checkServiceAccount(value, param);
    default:
      throw new Error(`unknown field kind for ${field}`);
  }
}

/**
 * Validates a provider's full configuration (after merging an update onto the stored one) and
 * splits it into the plain part and the part to seal. Every problem names the field and rule.
 */
export function validateSettings(
  provider: string,
  settings: Record<string, unknown>,
  context: SettingsContext,
): SplitSettings {
  const fields = fieldsOf(provider);
  const plain: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(settings)) {
    const param = paramOf(context, field);
    const spec = fields[field];
    if (!spec)
      throw IntegrationErrors.invalidField(
        param,
        `is not a setting of provider '${provider}'`,
        'whitelistValidation',
      );
    if (value === null || value === undefined) continue;
    const checked = checkValue(field, spec, value, param, context);
    if (spec.secret) secret[field] = checked;
    else plain[field] = checked;
  }
  const all = { ...plain, ...secret };
  const present = (field: string) => all[field] !== undefined || context.mappedFields.has(field);
  const require = (field: string, why: string) => {
    if (!present(field))
      throw IntegrationErrors.invalidField(paramOf(context, field), `is required ${why}`, 'isDefined');
  };
  const customHost = present('custom_host');
  let keyOptional = customHost;

  switch (provider) {
    case 'azure-openai': {
      const mode = (all.azure_auth_mode as string | undefined) ?? 'default';
      if (!customHost) require('azure_resource_name', 'for Azure OpenAI (or a custom_host)');
      require('azure_deployment_config', 'for Azure OpenAI');
      if (mode === 'entra') {
        require('azure_entra_tenant_id', 'when azure_auth_mode is entra');
        require('azure_entra_client_id', 'when azure_auth_mode is entra');
        require('azure_entra_client_secret', 'when azure_auth_mode is entra');
      }
      if (mode !== 'default') keyOptional = true;
      break;
    }
    case 'bedrock': {
      const type = (all.aws_auth_type as string | undefined) ?? 'accessKey';
      require('aws_region', 'for Bedrock');
      if (type === 'accessKey') {
        require('aws_access_key_id', 'when aws_auth_type is accessKey');
        require('aws_secret_access_key', 'when aws_auth_type is accessKey');
      } else {
        require('aws_role_arn', 'when aws_auth_type is assumedRole');
      }
      keyOptional = true;
      break;
    }
    case 'vertex-ai': {
      const type =
        (all.vertex_auth_type as string | undefined) ??
        (present('vertex_service_account_json') ? 'serviceAccount' : 'basic');
      require('vertex_region', 'for Vertex AI');
      if (type === 'serviceAccount') {
        require('vertex_service_account_json', 'when vertex_auth_type is serviceAccount');
        const account = all.vertex_service_account_json as ServiceAccount | undefined;
        if (account && !account.project_id)
          require('vertex_project_id', 'when the service account names no project_id');
        keyOptional = true;
      } else {
        require('vertex_project_id', 'when vertex_auth_type is basic');
      }
      break;
    }
    case 'workers-ai':
      if (!customHost) require('workers_ai_account_id', 'for Workers AI (or a custom_host)');
      break;
    default: {
      const compatible = COMPATIBLE.get(provider);
      if (compatible?.apiKeyOptional) keyOptional = true;
      if (compatible?.requiresCustomHost && !customHost) {
        throw IntegrationErrors.invalidField(
          paramOf(context, 'custom_host'),
          `is required for provider '${provider}'${compatible.note ? ` (${compatible.note})` : ''}`,
          'isDefined',
        );
      }
    }
  }
  if (!keyOptional && !context.hasKey) {
    throw IntegrationErrors.invalidField(
      'key',
      `is required for provider '${provider}' (or a secret mapping to key)`,
      'isDefined',
    );
  }
  return { plain, secret };
}

/** The masked form of the sensitive fields, as `masked_<field>` (reference: response masking). */
export function maskSettings(secret: Record<string, unknown>, camel = false): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(secret)) {
    const name = `masked_${camel ? camelFieldOf(field) : field}`;
    if (typeof value === 'string') masked[name] = maskSecret(value);
    else if (field === 'vertex_service_account_json' && value && typeof value === 'object') {
      const account = value as ServiceAccount;
      masked[name] = {
        type: account.type ?? 'service_account',
        project_id: account.project_id ?? null,
        client_email: account.client_email,
        private_key_id:
          typeof account.private_key_id === 'string' ? maskSecret(account.private_key_id) : null,
      };
    } else if (value && typeof value === 'object') {
      masked[name] = Object.fromEntries(
        Object.entries(value as Record<string, string>).map(([key, inner]) => [
          key,
          maskSecret(String(inner)),
        ]),
      );
    }
  }
  return masked;
}

export function toCamelSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).map(([field, value]) => [camelFieldOf(field), value]));
}

/** The default deployment: the one marked is_default, else the first. */
export function defaultDeployment(
  deployments: readonly AzureDeployment[] | undefined,
): AzureDeployment | undefined {
  if (!deployments || deployments.length === 0) return undefined;
  return deployments.find((deployment) => deployment.is_default) ?? deployments[0];
}

/** The deployment serving `model`: by alias, then model slug, then deployment name. */
export function deploymentForModel(
  deployments: readonly AzureDeployment[] | undefined,
  model: string,
): AzureDeployment | undefined {
  if (!deployments) return undefined;
  return (
    deployments.find((deployment) => deployment.alias === model) ??
    deployments.find((deployment) => deployment.azure_model_slug === model) ??
    deployments.find((deployment) => deployment.azure_deployment_name === model)
  );
}

/**
 * Adapter credentials from a provider's (decrypted) settings and key. Tokens that must be minted
 * (Vertex service accounts, Entra client credentials) are not here: see ResolvedProvider.auth.
 */
export function settingsToCredentials(
  provider: string,
  settings: Record<string, unknown>,
  key: string | null,
): ProviderCredentials {
  const credentials: ProviderCredentials = {};
  const text = (field: string) =>
    typeof settings[field] === 'string' ? (settings[field] as string) : undefined;
  if (key) credentials.apiKey = key;
  const customHost = text('custom_host');
  if (customHost) credentials.customHost = customHost;
  switch (provider) {
    case 'openai':
      if (text('openai_organization')) credentials.openaiOrganization = text('openai_organization');
      if (text('openai_project')) credentials.openaiProject = text('openai_project');
      break;
    case 'anthropic':
      if (text('anthropic_version')) credentials.anthropicVersion = text('anthropic_version');
      if (text('anthropic_beta')) credentials.anthropicBeta = text('anthropic_beta');
      break;
    case 'azure-openai': {
      if (text('azure_resource_name')) credentials.azureResourceName = text('azure_resource_name');
      if (text('azure_entra_scope')) credentials.azureEntraScope = text('azure_entra_scope');
      const deployment = defaultDeployment(settings.azure_deployment_config as AzureDeployment[] | undefined);
      if (deployment) {
        credentials.azureDeploymentId = deployment.azure_deployment_name;
        credentials.azureApiVersion = deployment.azure_api_version;
      }
      break;
    }
    case 'bedrock':
      if (text('aws_region')) credentials.awsRegion = text('aws_region');
      if (text('aws_access_key_id')) credentials.awsAccessKeyId = text('aws_access_key_id');
      if (text('aws_secret_access_key')) credentials.awsSecretAccessKey = text('aws_secret_access_key');
      if (text('aws_session_token')) credentials.awsSessionToken = text('aws_session_token');
      break;
    case 'vertex-ai': {
      const account = settings.vertex_service_account_json as ServiceAccount | undefined;
      const project = text('vertex_project_id') ?? account?.project_id;
      if (project) credentials.vertexProjectId = project;
      if (text('vertex_region')) credentials.vertexRegion = text('vertex_region');
      // Basic auth: the stored key is the access token.
      if (key && !account) credentials.vertexAccessToken = key;
      break;
    }
    case 'workers-ai': {
      const account = text('workers_ai_account_id');
      if (account && !customHost) {
        credentials.customHost = `https://api.cloudflare.com/client/v4/accounts/${encodeURIComponent(account)}/ai/v1`;
      }
      break;
    }
    case 'hugging-face':
      if (text('huggingface_base_url') && !customHost) credentials.customHost = text('huggingface_base_url');
      break;
    default:
      break;
  }
  return credentials;
}
