import { ManagerHttpResponse, asObject, excerpt, managerHttp, parseJson } from './manager-http';
import {
  SecretLocation,
  SecretManagerClient,
  SecretManagerEnvironment,
  SecretManagerError,
  pickFromText,
} from './secret-manager.types';

export const AZURE_AUTH_MODES = ['entra', 'managed', 'default'] as const;
export type AzureAuthMode = (typeof AZURE_AUTH_MODES)[number];

/** Normalised `auth_config` of an `azure_kv` reference (see secret-reference.config.ts). */
export interface AzureKeyVaultAuthConfig {
  azure_auth_mode: AzureAuthMode;
  /** `https://<name>.vault.azure.net`, without a trailing slash. */
  azure_vault_url: string;
  azure_entra_tenant_id?: string;
  azure_entra_client_id?: string;
  azure_entra_client_secret?: string;
  azure_managed_client_id?: string;
  /** Overrides `https://login.microsoftonline.com` (sovereign clouds, local tests). */
  azure_authority_host?: string;
}

export const AZURE_KEY_VAULT_API_VERSION = '7.4';
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
const IMDS_ENDPOINT = 'http://169.254.169.254/metadata/identity/oauth2/token';

interface AccessToken {
  value: string;
  renewAt: number;
}

/**
 * Azure Key Vault `GET {vault}/secrets/{name}[/{version}]?api-version=7.4` with a bearer token
 * from Microsoft Entra ID: client credentials (`entra`), the managed identity endpoint
 * (`managed`), or the gateway environment (`default`: AZURE_CLIENT_SECRET or a federated token
 * file, else managed identity). Tokens are cached until 90% of their lifetime.
 */
export class AzureKeyVaultClient implements SecretManagerClient {
  readonly managerType = 'azure_kv' as const;
  private cached: AccessToken | null = null;
  private pending: Promise<AccessToken> | null = null;

  constructor(
    private readonly config: AzureKeyVaultAuthConfig,
    private readonly environment: SecretManagerEnvironment,
  ) {}

  get target(): string {
    return this.config.azure_vault_url;
  }

  async read(location: SecretLocation): Promise<string> {
    // The path is `name` or `name/version`; an explicit version wins.
    const [name, pathVersion] = location.path.split('/', 2);
    const version = location.version ?? pathVersion ?? null;
    const describe = `the secret '${name}'${version ? ` version ${version}` : ''}`;
    const url = `${this.config.azure_vault_url}/secrets/${encodeURIComponent(name)}${
      version ? `/${encodeURIComponent(version)}` : ''
    }?api-version=${AZURE_KEY_VAULT_API_VERSION}`;

    let answer = await this.get(url, await this.token());
    if (answer.status === 401 && this.cached) {
      // The token may have been revoked or the vault moved tenant: one fresh token, one retry.
      this.cached = null;
      answer = await this.get(url, await this.token());
    }
    if (answer.status === 200) {
      const value = asObject(parseJson(answer.text))?.value;
      if (typeof value !== 'string') {
        throw new SecretManagerError('invalid_response', `${describe} answered without a string value`, 200);
      }
      return pickFromText(value, location.key, describe);
    }
    const error = asObject(asObject(parseJson(answer.text))?.error);
    const code = typeof error?.code === 'string' ? error.code : `HTTP ${answer.status}`;
    const message = typeof error?.message === 'string' ? `: ${excerpt(error.message)}` : '';
    const detail = `(${code}, HTTP ${answer.status})${message}`;
    if (answer.status === 404) {
      throw new SecretManagerError('not_found', `${describe} was not found ${detail}`, 404);
    }
    if (answer.status === 401) {
      throw new SecretManagerError('unauthenticated', `Key Vault refused the token ${detail}`, 401);
    }
    if (answer.status === 403) {
      throw new SecretManagerError('forbidden', `Key Vault denied reading ${describe} ${detail}`, 403);
    }
    throw new SecretManagerError(
      'upstream_error',
      `Key Vault answered for ${describe} ${detail}`,
      answer.status,
    );
  }

  private get(url: string, token: string): Promise<ManagerHttpResponse> {
    return managerHttp(
      { method: 'GET', url, headers: { accept: 'application/json', authorization: `Bearer ${token}` } },
      this.environment.requestTimeoutMs,
    );
  }

  private async token(): Promise<string> {
    if (this.cached && Date.now() < this.cached.renewAt) return this.cached.value;
    this.pending ??= this.acquire().finally(() => {
      this.pending = null;
    });
    this.cached = await this.pending;
    return this.cached.value;
  }

  /** The token audience follows the vault's cloud (public, China, US Government). */
  private scope(): string {
    const host = new URL(this.config.azure_vault_url).hostname;
    const match = /\.(vault\.azure\.cn|vault\.usgovcloudapi\.net|vault\.microsoftazure\.de)$/.exec(host);
    return `https://${match ? match[1] : 'vault.azure.net'}/.default`;
  }

  private acquire(): Promise<AccessToken> {
    const { config } = this;
    const env = this.environment.env;
    if (config.azure_auth_mode === 'entra') {
      if (
        !config.azure_entra_tenant_id ||
        !config.azure_entra_client_id ||
        !config.azure_entra_client_secret
      ) {
        throw new SecretManagerError(
          'invalid_config',
          'azure_entra_tenant_id, azure_entra_client_id and azure_entra_client_secret are required for entra auth',
        );
      }
      return this.clientCredentials(
        config.azure_authority_host ?? DEFAULT_AUTHORITY,
        config.azure_entra_tenant_id,
        config.azure_entra_client_id,
        { client_secret: config.azure_entra_client_secret },
      );
    }
    if (config.azure_auth_mode === 'default' && env.AZURE_TENANT_ID && env.AZURE_CLIENT_ID) {
      const authority = config.azure_authority_host ?? env.AZURE_AUTHORITY_HOST ?? DEFAULT_AUTHORITY;
      if (env.AZURE_CLIENT_SECRET) {
        return this.clientCredentials(authority, env.AZURE_TENANT_ID, env.AZURE_CLIENT_ID, {
          client_secret: env.AZURE_CLIENT_SECRET,
        });
      }
      if (env.AZURE_FEDERATED_TOKEN_FILE) {
        let assertion: string;
        try {
          assertion = this.environment.readFile(env.AZURE_FEDERATED_TOKEN_FILE).trim();
        } catch (error) {
          throw new SecretManagerError(
            'invalid_config',
            `cannot read AZURE_FEDERATED_TOKEN_FILE ${env.AZURE_FEDERATED_TOKEN_FILE}: ${(error as Error).message}`,
          );
        }
        return this.clientCredentials(authority, env.AZURE_TENANT_ID, env.AZURE_CLIENT_ID, {
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        });
      }
    }
    return this.managedIdentity(
      config.azure_managed_client_id ??
        (config.azure_auth_mode === 'default' ? env.AZURE_CLIENT_ID : undefined),
    );
  }

  private async clientCredentials(
    authority: string,
    tenant: string,
    clientId: string,
    proof: Record<string, string>,
  ): Promise<AccessToken> {
    const url = `${authority.replace(/\/+$/, '')}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`;
    const answer = await managerHttp(
      {
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          scope: this.scope(),
          ...proof,
        }).toString(),
      },
      this.environment.requestTimeoutMs,
    );
    const body = asObject(parseJson(answer.text));
    if (answer.status !== 200) {
      const code = typeof body?.error === 'string' ? body.error : `HTTP ${answer.status}`;
      const description =
        typeof body?.error_description === 'string'
          ? `: ${excerpt(body.error_description.split('\n')[0])}`
          : '';
      throw new SecretManagerError(
        answer.status >= 500 ? 'upstream_error' : 'unauthenticated',
        `Entra ID refused a token for client ${clientId} in tenant ${tenant} (${code}, HTTP ${answer.status})${description}`,
        answer.status,
      );
    }
    return accessToken(body, 'Entra ID');
  }

  private async managedIdentity(clientId: string | undefined): Promise<AccessToken> {
    const env = this.environment.env;
    const resource = this.scope().replace(/\/\.default$/, '');
    let url: string;
    let headers: Record<string, string>;
    if (env.IDENTITY_ENDPOINT && env.IDENTITY_HEADER) {
      // App Service and Container Apps expose their own managed identity endpoint.
      url = `${env.IDENTITY_ENDPOINT}?${new URLSearchParams({
        'api-version': '2019-08-01',
        resource,
        ...(clientId ? { client_id: clientId } : {}),
      })}`;
      headers = { 'x-identity-header': env.IDENTITY_HEADER };
    } else {
      url = `${env.AZURE_IMDS_ENDPOINT || IMDS_ENDPOINT}?${new URLSearchParams({
        'api-version': '2018-02-01',
        resource,
        ...(clientId ? { client_id: clientId } : {}),
      })}`;
      headers = { metadata: 'true' };
    }
    const answer = await managerHttp(
      { method: 'GET', url, headers },
      Math.min(this.environment.requestTimeoutMs, 5_000),
    ).catch((error: SecretManagerError) => {
      throw new SecretManagerError(
        'invalid_config',
        `no managed identity is available to the gateway (${error.message})`,
      );
    });
    const body = asObject(parseJson(answer.text));
    if (answer.status !== 200) {
      const code = typeof body?.error === 'string' ? body.error : `HTTP ${answer.status}`;
      throw new SecretManagerError(
        'unauthenticated',
        `the managed identity endpoint refused a token (${code}, HTTP ${answer.status})`,
        answer.status,
      );
    }
    return accessToken(body, 'the managed identity endpoint');
  }
}

function accessToken(body: Record<string, unknown> | undefined, what: string): AccessToken {
  const value = body?.access_token;
  if (typeof value !== 'string' || value === '') {
    throw new SecretManagerError('invalid_response', `${what} answered without an access_token`);
  }
  // expires_in is a number from Entra ID and a string from the managed identity endpoints.
  const expiresIn = Number(body?.expires_in);
  const lifetimeMs = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : 5 * 60 * 1000;
  return { value, renewAt: Date.now() + lifetimeMs * 0.9 };
}
