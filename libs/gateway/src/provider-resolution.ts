import { IncomingHttpHeaders } from 'node:http';
import type { ResolvedProvider } from '@switchboard/integrations';
import { ProviderAdapter, ProviderCredentials, getProviderAdapter } from '@switchboard/providers';
import { GatewayErrors } from './gateway.errors';

export interface ResolvedTarget {
  adapter: ProviderAdapter;
  credentials: ProviderCredentials;
  /** `@slug` or virtual key slug when one was used. */
  providerSlug: string | null;
  /** Params a config forces onto the body. */
  overrideParams: Record<string, unknown> | null;
  /** The stored provider (`@slug` or virtual key) behind this target: models, pricing, limits. */
  stored?: ResolvedProvider;
}

/** A stored target: from memory on a warm request; a promise only while a credential is first read. */
export type LookupResult = ResolvedTarget | null | Promise<ResolvedTarget | null>;

/** How stored providers and stored configs are found; each reads an in-memory cache. */
export interface TargetLookups {
  providerSlug?: (slug: string) => LookupResult;
  virtualKey?: (slug: string) => LookupResult;
  config?: (ref: string) => ResolvedTarget | null;
}

function found(result: LookupResult, notFound: () => Error): ResolvedTarget | Promise<ResolvedTarget> {
  if (result instanceof Promise) {
    return result.then((target) => {
      if (!target) throw notFound();
      return target;
    });
  }
  if (!result) throw notFound();
  return result;
}

/** Provider-specific credential headers for direct authentication. */
const CREDENTIAL_HEADERS: Readonly<Record<string, keyof ProviderCredentials>> = {
  'x-gateway-azure-resource-name': 'azureResourceName',
  'x-gateway-azure-deployment-id': 'azureDeploymentId',
  'x-gateway-azure-api-version': 'azureApiVersion',
  'x-gateway-azure-entra-token': 'azureEntraToken',
  'x-gateway-azure-entra-scope': 'azureEntraScope',
  'x-gateway-aws-access-key-id': 'awsAccessKeyId',
  'x-gateway-aws-secret-access-key': 'awsSecretAccessKey',
  'x-gateway-aws-session-token': 'awsSessionToken',
  'x-gateway-aws-region': 'awsRegion',
  'x-gateway-vertex-project-id': 'vertexProjectId',
  'x-gateway-vertex-region': 'vertexRegion',
  'x-gateway-anthropic-version': 'anthropicVersion',
  'x-gateway-anthropic-beta': 'anthropicBeta',
  'anthropic-version': 'anthropicVersion',
  'anthropic-beta': 'anthropicBeta',
  'openai-organization': 'openaiOrganization',
  'openai-project': 'openaiProject',
};

const CREDENTIAL_HEADER_ENTRIES = Object.entries(CREDENTIAL_HEADERS);

/** Inline config keys that map to credentials (snake_case as in the config schema). */
const CONFIG_CREDENTIALS: Readonly<Record<string, keyof ProviderCredentials>> = {
  api_key: 'apiKey',
  custom_host: 'customHost',
  azure_resource_name: 'azureResourceName',
  azure_deployment_id: 'azureDeploymentId',
  azure_api_version: 'azureApiVersion',
  azure_entra_scope: 'azureEntraScope',
  aws_access_key_id: 'awsAccessKeyId',
  aws_secret_access_key: 'awsSecretAccessKey',
  aws_session_token: 'awsSessionToken',
  aws_region: 'awsRegion',
  vertex_project_id: 'vertexProjectId',
  vertex_region: 'vertexRegion',
  anthropic_beta: 'anthropicBeta',
  anthropic_version: 'anthropicVersion',
};

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The provider key of direct auth: `Authorization: Bearer <key>`. */
export function bearer(headers: IncomingHttpHeaders): string | undefined {
  const authorization = header(headers, 'authorization');
  if (!authorization) return undefined;
  return authorization.replace(/^Bearer\s+/i, '');
}

/** Hosts already checked; bounded, since the header is the client's to choose. */
const checkedHosts = new Map<string, string>();
const MAX_CHECKED_HOSTS = 1024;

/** A URL object per request was the costliest step of reading the headers: a checked host is remembered. */
export function checkCustomHost(value: string): string {
  const checked = checkedHosts.get(value);
  if (checked !== undefined) return checked;
  const host = parseCustomHost(value);
  if (checkedHosts.size >= MAX_CHECKED_HOSTS) checkedHosts.clear();
  checkedHosts.set(value, host);
  return host;
}

function parseCustomHost(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw GatewayErrors.invalidCustomHost();
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw GatewayErrors.invalidCustomHost();
  return value.replace(/\/+$/, '');
}

function adapterFor(name: string): ProviderAdapter {
  const adapter = getProviderAdapter(name);
  if (!adapter) throw GatewayErrors.unknownProvider(name);
  return adapter;
}

/**
 * Which provider to call, with which credentials, from the request headers alone. Stored
 * providers (`@slug`, virtual keys) and stored configs are resolved by the `lookup` callbacks,
 * which read in-memory caches.
 */
export function resolveTarget(headers: IncomingHttpHeaders): ResolvedTarget | null;
export function resolveTarget(
  headers: IncomingHttpHeaders,
  lookup: TargetLookups,
): ResolvedTarget | Promise<ResolvedTarget> | null;
export function resolveTarget(
  headers: IncomingHttpHeaders,
  lookup: TargetLookups = {},
): ResolvedTarget | Promise<ResolvedTarget> | null {
  const configHeader = header(headers, 'x-gateway-config');
  if (configHeader) return resolveConfig(configHeader, headers, lookup.config);

  const virtualKey = header(headers, 'x-gateway-virtual-key');
  if (virtualKey) {
    return found(lookup.virtualKey?.(virtualKey) ?? null, () => GatewayErrors.virtualKeyNotFound(virtualKey));
  }

  const provider = header(headers, 'x-gateway-provider');
  if (!provider) return null;
  if (provider.startsWith('@')) {
    const slug = provider.slice(1);
    return found(lookup.providerSlug?.(slug) ?? null, () => GatewayErrors.providerSlugNotFound(slug));
  }
  const credentials: ProviderCredentials = {};
  const apiKey = bearer(headers);
  if (apiKey) credentials.apiKey = apiKey;
  if (provider === 'vertex-ai' && apiKey) credentials.vertexAccessToken = apiKey;
  const customHost = header(headers, 'x-gateway-custom-host');
  if (customHost) credentials.customHost = checkCustomHost(customHost);
  for (const [name, field] of CREDENTIAL_HEADER_ENTRIES) {
    const value = header(headers, name);
    if (value) (credentials as Record<string, string>)[field] = value;
  }
  return { adapter: adapterFor(provider), credentials, providerSlug: null, overrideParams: null };
}

/** A config is an id, a slug, or inline JSON; here a single target (routing strategies build on it). */
function resolveConfig(
  value: string,
  headers: IncomingHttpHeaders,
  lookupStored?: (ref: string) => ResolvedTarget | null,
): ResolvedTarget {
  if (!value.trimStart().startsWith('{')) {
    const stored = lookupStored?.(value) ?? null;
    if (!stored) throw GatewayErrors.configNotFound(value);
    return stored;
  }
  let config: unknown;
  try {
    config = JSON.parse(value);
  } catch {
    throw GatewayErrors.invalidConfig('x-gateway-config is not valid JSON', 'x-gateway-config');
  }
  return targetFromConfig(config, headers, '');
}

function targetFromConfig(config: unknown, headers: IncomingHttpHeaders, path: string): ResolvedTarget {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw GatewayErrors.invalidConfig(`${path || 'config'} must be an object`, path || 'config');
  }
  const record = config as Record<string, unknown>;
  if (Array.isArray(record.targets)) {
    if (record.targets.length === 0)
      throw GatewayErrors.invalidConfig('targets must not be empty', `${path}targets`);
    return targetFromConfig(record.targets[0], headers, `${path}targets[0].`);
  }
  const provider = record.provider;
  if (typeof provider !== 'string' || provider.length === 0) {
    throw GatewayErrors.invalidConfig(`${path}provider is required`, `${path}provider`);
  }
  const credentials: ProviderCredentials = {};
  for (const [key, field] of Object.entries(CONFIG_CREDENTIALS)) {
    const value = record[key];
    if (value === undefined) continue;
    if (typeof value !== 'string')
      throw GatewayErrors.invalidConfig(`${path}${key} must be a string`, `${path}${key}`);
    (credentials as Record<string, string>)[field] = key === 'custom_host' ? checkCustomHost(value) : value;
  }
  if (!credentials.apiKey) {
    const apiKey = bearer(headers);
    if (apiKey) credentials.apiKey = apiKey;
  }
  const override = record.override_params;
  if (
    override !== undefined &&
    (typeof override !== 'object' || override === null || Array.isArray(override))
  ) {
    throw GatewayErrors.invalidConfig(`${path}override_params must be an object`, `${path}override_params`);
  }
  return {
    adapter: adapterFor(provider),
    credentials,
    providerSlug: null,
    overrideParams: (override as Record<string, unknown> | undefined) ?? null,
  };
}
