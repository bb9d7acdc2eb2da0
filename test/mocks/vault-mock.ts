/**
 * Mock of HashiCorp Vault's HTTP API, as far as secret references use it: the KV version 2
 * engine (`GET /v1/<mount>/data/<path>[?version=N]`), token checks on `X-Vault-Token`, namespaces
 * on `X-Vault-Namespace`, and logins through AppRole (`POST /v1/auth/<mount>/login` with role_id
 * and secret_id) and Kubernetes (role and jwt). Errors use Vault's `{ "errors": [...] }` body.
 */
import { randomBytes } from 'node:crypto';
import { ErrorShape, MockContext, MockServer, headerValue } from './mock-server';

export interface VaultMockOptions {
  /** Static tokens accepted as they are (token auth). */
  tokens?: string[];
  /** Mount paths of KV version 2 engines; default `secret`. */
  mounts?: string[];
  approle?: { mount?: string; roleId: string; secretId: string; leaseSeconds?: number };
  kubernetes?: { mount?: string; role: string; jwt: string; leaseSeconds?: number };
}

export const vaultErrorShape: ErrorShape = (_status, message) => ({
  body: { errors: message ? [message] : [] },
});

interface Version {
  data: Record<string, unknown> | null;
  createdTime: string;
  deletionTime: string;
  destroyed: boolean;
}

export class VaultMock {
  readonly server: MockServer;
  /** Tokens handed out by logins, with their expiry (epoch ms; Infinity without a lease). */
  readonly issued = new Map<string, number>();
  private readonly staticTokens: Set<string>;
  private readonly mounts: Set<string>;
  /** `<namespace>|<mount>|<path>` → versions (index 0 is version 1). */
  private readonly store = new Map<string, Version[]>();

  constructor(private readonly options: VaultMockOptions = {}) {
    this.staticTokens = new Set(options.tokens ?? []);
    this.mounts = new Set(options.mounts ?? ['secret']);
    this.server = new MockServer({
      name: 'vault',
      errorShape: vaultErrorShape,
      routes: [
        { method: 'POST', path: /^\/v1\/auth\/(.+)\/login$/, handler: (context) => this.login(context) },
        { method: 'GET', path: /^\/v1\/(.+?)\/data\/(.+)$/, handler: (context) => this.read(context) },
      ],
    });
  }

  async listen(): Promise<this> {
    await this.server.listen();
    return this;
  }

  get url(): string {
    return this.server.url;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Writes a new version of a secret (like `vault kv put`). */
  put(
    path: string,
    data: Record<string, unknown>,
    options: { mount?: string; namespace?: string } = {},
  ): number {
    const key = this.key(options.namespace ?? '', options.mount ?? 'secret', path);
    const versions = this.store.get(key) ?? [];
    versions.push({ data, createdTime: new Date().toISOString(), deletionTime: '', destroyed: false });
    this.store.set(key, versions);
    return versions.length;
  }

  /** Soft-deletes the latest version (like `vault kv delete`). */
  deleteLatest(path: string, options: { mount?: string; namespace?: string } = {}): void {
    const versions = this.store.get(this.key(options.namespace ?? '', options.mount ?? 'secret', path));
    const latest = versions?.[versions.length - 1];
    if (latest) latest.deletionTime = new Date().toISOString();
  }

  /** Revokes a login token (like `vault token revoke`). */
  revoke(token: string): void {
    this.issued.delete(token);
    this.staticTokens.delete(token);
  }

  /** Requests to the KV read endpoint since start or the last reset. */
  get reads(): number {
    return this.server.requestsTo((request) => request.method === 'GET' && /\/data\//.test(request.path))
      .length;
  }

  get logins(): number {
    return this.server.requestsTo(/\/login$/).length;
  }

  private key(namespace: string, mount: string, path: string): string {
    return `${namespace.replace(/^\/+|\/+$/g, '')}|${mount.replace(/^\/+|\/+$/g, '')}|${path.replace(/^\/+|\/+$/g, '')}`;
  }

  private tokenValid(token: string): boolean {
    if (this.staticTokens.has(token)) return true;
    const expiry = this.issued.get(token);
    return expiry !== undefined && Date.now() < expiry;
  }

  private issue(leaseSeconds: number, policies: string[]): Record<string, unknown> {
    const token = `hvs.${randomBytes(18).toString('base64url')}`;
    this.issued.set(token, leaseSeconds > 0 ? Date.now() + leaseSeconds * 1000 : Infinity);
    return {
      request_id: randomBytes(8).toString('hex'),
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: null,
      wrap_info: null,
      warnings: null,
      auth: {
        client_token: token,
        accessor: randomBytes(8).toString('hex'),
        policies: ['default', ...policies],
        token_policies: ['default', ...policies],
        metadata: {},
        lease_duration: leaseSeconds,
        renewable: true,
        entity_id: '',
        token_type: 'service',
        orphan: true,
      },
    };
  }

  private login(context: MockContext): void {
    const [mount] = context.params;
    const body = context.body;
    const { approle, kubernetes } = this.options;
    if (approle && mount === (approle.mount ?? 'approle')) {
      if (typeof body.role_id !== 'string' || body.role_id === '')
        return context.error(400, 'missing role_id');
      if (body.role_id !== approle.roleId) return context.error(400, 'invalid role or secret ID');
      if (body.secret_id !== approle.secretId) return context.error(400, 'invalid role or secret ID');
      return context.json(200, this.issue(approle.leaseSeconds ?? 3600, ['approle-reader']));
    }
    if (kubernetes && mount === (kubernetes.mount ?? 'kubernetes')) {
      if (body.role !== kubernetes.role)
        return context.error(400, `invalid role name "${String(body.role)}"`);
      if (body.jwt !== kubernetes.jwt) return context.error(403, 'permission denied');
      return context.json(200, this.issue(kubernetes.leaseSeconds ?? 3600, ['k8s-reader']));
    }
    return context.error(400, `no handler for route "auth/${mount}/login". route entry not found.`);
  }

  private read(context: MockContext): void {
    const token = headerValue(context.request.headers, 'x-vault-token');
    if (!token) return context.error(403, 'missing client token');
    if (!this.tokenValid(token)) return context.error(403, 'permission denied');
    const [mount, path] = context.params;
    if (!this.mounts.has(mount)) {
      return context.error(404, `no handler for route "${mount}/data/${path}". route entry not found.`);
    }
    const namespace = headerValue(context.request.headers, 'x-vault-namespace') ?? '';
    const versions = this.store.get(this.key(namespace, mount, path));
    if (!versions || versions.length === 0) return context.json(404, { errors: [] });
    const asked = context.request.query.version;
    const number = typeof asked === 'string' && asked !== '0' ? Number(asked) : versions.length;
    const version = versions[number - 1];
    if (!version) return context.json(404, { errors: [] });
    const deleted = version.deletionTime !== '' || version.destroyed;
    const metadata = {
      created_time: version.createdTime,
      custom_metadata: null,
      deletion_time: version.deletionTime,
      destroyed: version.destroyed,
      version: number,
    };
    // A deleted version answers 404 but still carries its metadata, as Vault does.
    return context.json(deleted ? 404 : 200, {
      request_id: randomBytes(8).toString('hex'),
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: { data: deleted ? null : version.data, metadata },
      wrap_info: null,
      warnings: null,
      auth: null,
    });
  }
}

export async function startVaultMock(options: VaultMockOptions = {}): Promise<VaultMock> {
  return new VaultMock(options).listen();
}
