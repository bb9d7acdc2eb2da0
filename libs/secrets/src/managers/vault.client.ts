import { ManagerHttpResponse, asObject, excerpt, managerHttp, parseJson } from './manager-http';
import {
  SecretLocation,
  SecretManagerClient,
  SecretManagerEnvironment,
  SecretManagerError,
  pickSecretField,
} from './secret-manager.types';

export const VAULT_AUTH_TYPES = ['token', 'approle', 'kubernetes'] as const;
export type VaultAuthType = (typeof VAULT_AUTH_TYPES)[number];

/** Normalised `auth_config` of a `hashicorp_vault` reference (see secret-reference.config.ts). */
export interface VaultAuthConfig {
  vault_auth_type: VaultAuthType;
  /** Base address without a trailing slash, e.g. `https://vault.example.com:8200`. */
  vault_addr: string;
  vault_namespace?: string;
  /** Mount path of the KV version 2 engine; default `secret`. */
  vault_mount?: string;
  vault_token?: string;
  vault_role_id?: string;
  vault_secret_id?: string;
  vault_role?: string;
  /** Mount path of the AppRole or Kubernetes auth method; default `approle` / `kubernetes`. */
  vault_auth_mount?: string;
}

export const DEFAULT_VAULT_KV_MOUNT = 'secret';
export const DEFAULT_KUBERNETES_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

interface CachedToken {
  value: string;
  /** Epoch ms after which we log in again; Infinity for a token without a lease. */
  renewAt: number;
}

/**
 * HashiCorp Vault, KV secrets engine version 2: `GET /v1/<mount>/data/<path>` answers
 * `{ data: { data: {...}, metadata: {...} } }`. Auth by a static token, or by an AppRole or
 * Kubernetes login whose client token is cached until 90% of its lease has passed.
 */
export class VaultClient implements SecretManagerClient {
  readonly managerType = 'hashicorp_vault' as const;
  private cached: CachedToken | null = null;
  private loggingIn: Promise<CachedToken> | null = null;

  constructor(
    private readonly config: VaultAuthConfig,
    private readonly environment: SecretManagerEnvironment,
  ) {}

  get target(): string {
    const namespace = this.config.vault_namespace ? ` (namespace ${this.config.vault_namespace})` : '';
    return `${this.config.vault_addr}${namespace}`;
  }

  async read(location: SecretLocation): Promise<string> {
    const mount = trimSlashes(this.config.vault_mount ?? DEFAULT_VAULT_KV_MOUNT);
    const path = trimSlashes(location.path);
    if (!path) throw new SecretManagerError('invalid_config', 'the Vault secret path is empty');
    const version = location.version ?? null;
    if (version !== null && !/^\d+$/.test(version)) {
      throw new SecretManagerError('invalid_config', `Vault KV versions are integers (got '${version}')`);
    }
    const url = `${this.config.vault_addr}/v1/${encodePath(mount)}/data/${encodePath(path)}${
      version !== null ? `?version=${version}` : ''
    }`;
    const describe = `the Vault secret '${mount}/${path}'${version !== null ? ` version ${version}` : ''}`;

    let token = await this.clientToken();
    let answer = await this.get(url, token.value);
    if ((answer.status === 403 || answer.status === 401) && this.config.vault_auth_type !== 'token') {
      // A login token can be revoked before its lease ends: log in once more before giving up.
      this.cached = null;
      token = await this.clientToken();
      answer = await this.get(url, token.value);
    }
    if (answer.status === 200) {
      const data = asObject(asObject(asObject(parseJson(answer.text))?.data)?.data);
      if (!data) {
        const deleted = asObject(asObject(asObject(parseJson(answer.text))?.data)?.metadata);
        if (deleted && (deleted.deletion_time || deleted.destroyed)) {
          throw new SecretManagerError('not_found', `${describe} is deleted`, 200);
        }
        throw new SecretManagerError(
          'invalid_response',
          `${describe}: the answer has no data.data object (is '${mount}' a KV version 2 mount?)`,
          200,
        );
      }
      return pickSecretField(data, location.key, describe);
    }
    throw this.failure(answer, describe);
  }

  private get(url: string, token: string): Promise<ManagerHttpResponse> {
    return managerHttp(
      { method: 'GET', url, headers: { ...this.baseHeaders(), 'x-vault-token': token } },
      this.environment.requestTimeoutMs,
    );
  }

  private baseHeaders(): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.config.vault_namespace) headers['x-vault-namespace'] = this.config.vault_namespace;
    return headers;
  }

  private async clientToken(): Promise<CachedToken> {
    if (this.config.vault_auth_type === 'token') {
      if (!this.config.vault_token) {
        throw new SecretManagerError('invalid_config', 'vault_token is missing from the auth config');
      }
      return { value: this.config.vault_token, renewAt: Infinity };
    }
    if (this.cached && Date.now() < this.cached.renewAt) return this.cached;
    // Single flight: concurrent reads share one login.
    this.loggingIn ??= this.login().finally(() => {
      this.loggingIn = null;
    });
    this.cached = await this.loggingIn;
    return this.cached;
  }

  private async login(): Promise<CachedToken> {
    const { config } = this;
    let mount: string;
    let body: Record<string, string>;
    if (config.vault_auth_type === 'approle') {
      if (!config.vault_role_id || !config.vault_secret_id) {
        throw new SecretManagerError(
          'invalid_config',
          'vault_role_id and vault_secret_id are required for AppRole auth',
        );
      }
      mount = config.vault_auth_mount ?? 'approle';
      body = { role_id: config.vault_role_id, secret_id: config.vault_secret_id };
    } else {
      if (!config.vault_role) {
        throw new SecretManagerError('invalid_config', 'vault_role is required for Kubernetes auth');
      }
      const tokenPath = this.environment.env.VAULT_KUBERNETES_TOKEN_PATH || DEFAULT_KUBERNETES_TOKEN_PATH;
      let jwt: string;
      try {
        jwt = this.environment.readFile(tokenPath).trim();
      } catch (error) {
        throw new SecretManagerError(
          'invalid_config',
          `cannot read the Kubernetes service account token at ${tokenPath}: ${(error as Error).message}`,
        );
      }
      mount = config.vault_auth_mount ?? 'kubernetes';
      body = { role: config.vault_role, jwt };
    }
    const method = config.vault_auth_type === 'approle' ? 'AppRole' : 'Kubernetes';
    const answer = await managerHttp(
      {
        method: 'POST',
        url: `${config.vault_addr}/v1/auth/${encodePath(trimSlashes(mount))}/login`,
        headers: { ...this.baseHeaders(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      this.environment.requestTimeoutMs,
    );
    if (answer.status !== 200) {
      const reason = vaultErrors(answer.text);
      const kind = answer.status === 400 || answer.status === 401 || answer.status === 403;
      throw new SecretManagerError(
        kind ? 'unauthenticated' : answer.status === 404 ? 'invalid_config' : 'upstream_error',
        `${method} login at auth/${trimSlashes(mount)} failed with HTTP ${answer.status}${reason ? `: ${reason}` : ''}`,
        answer.status,
      );
    }
    const auth = asObject(asObject(parseJson(answer.text))?.auth);
    const token = auth?.client_token;
    if (typeof token !== 'string' || token === '') {
      throw new SecretManagerError('invalid_response', `${method} login answered without auth.client_token`);
    }
    const lease = typeof auth?.lease_duration === 'number' ? auth.lease_duration : 0;
    return { value: token, renewAt: lease > 0 ? Date.now() + lease * 900 : Infinity };
  }

  private failure(answer: ManagerHttpResponse, describe: string): SecretManagerError {
    const reason = vaultErrors(answer.text);
    const suffix = reason ? `: ${reason}` : '';
    switch (answer.status) {
      case 404:
        return new SecretManagerError('not_found', `${describe} was not found (HTTP 404)`, 404);
      case 401:
        return new SecretManagerError('unauthenticated', `Vault refused the token (HTTP 401)${suffix}`, 401);
      case 403:
        return new SecretManagerError(
          'forbidden',
          `Vault denied reading ${describe} (HTTP 403)${suffix}; the token is invalid or its policy lacks read on that path`,
          403,
        );
      default:
        return new SecretManagerError(
          'upstream_error',
          `Vault answered HTTP ${answer.status} for ${describe}${suffix}`,
          answer.status,
        );
    }
  }
}

function vaultErrors(text: string): string {
  const errors = asObject(parseJson(text))?.errors;
  if (Array.isArray(errors)) return excerpt(errors.filter((e) => typeof e === 'string').join('; '));
  return '';
}

function trimSlashes(value: string): string {
  return value.replace(/^\/+|\/+$/g, '');
}

function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}
