/**
 * Mock of Microsoft Entra ID's token endpoint (`POST /<tenant>/oauth2/v2.0/token`,
 * client_credentials), of the managed identity endpoint (IMDS, `GET
 * /metadata/identity/oauth2/token` with `Metadata: true`), and of Azure Key Vault's secrets API
 * (`GET /secrets/<name>[/<version>]?api-version=7.4` with a bearer token). One port serves all
 * three: point `azure_authority_host` and `azure_vault_url` at it.
 */
import { randomBytes } from 'node:crypto';
import { ErrorShape, MockContext, MockServer, headerValue } from './mock-server';

export interface AzureKeyVaultMockOptions {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** Lifetime of issued tokens; default 3599 s like Entra ID. */
  tokenSeconds?: number;
  /** Serve the managed identity endpoint (any client id, or only this one). */
  managedIdentity?: { clientId?: string };
}

export const keyVaultErrorShape: ErrorShape = (status, message, errorType) => ({
  body: {
    error: {
      code: errorType ?? (status === 401 ? 'Unauthorized' : status === 404 ? 'NotFound' : 'BadParameter'),
      message,
    },
  },
});

interface SecretVersion {
  id: string;
  value: string;
  created: number;
  enabled: boolean;
}

export class AzureKeyVaultMock {
  readonly server: MockServer;
  /** Issued access tokens and when they stop working (epoch ms). */
  readonly tokens = new Map<string, number>();
  private readonly secrets = new Map<string, SecretVersion[]>();

  constructor(private readonly options: AzureKeyVaultMockOptions) {
    this.server = new MockServer({
      name: 'azure-key-vault',
      errorShape: keyVaultErrorShape,
      routes: [
        {
          method: 'POST',
          path: /^\/([^/]+)\/oauth2\/v2\.0\/token$/,
          handler: (context) => this.token(context),
        },
        { method: 'GET', path: '/metadata/identity/oauth2/token', handler: (context) => this.imds(context) },
        {
          method: 'GET',
          path: /^\/secrets\/([^/]+)(?:\/([^/]*))?$/,
          handler: (context) => this.secret(context),
        },
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

  /** Sets a secret (a new version, which becomes the latest); answers the version id. */
  setSecret(name: string, value: string): string {
    const versions = this.secrets.get(name.toLowerCase()) ?? [];
    const id = randomBytes(16).toString('hex');
    versions.push({ id, value, created: Math.floor(Date.now() / 1000), enabled: true });
    this.secrets.set(name.toLowerCase(), versions);
    return id;
  }

  get reads(): number {
    return this.server.requestsTo(/^\/secrets\//).length;
  }

  get tokenRequests(): number {
    return this.server.requestsTo(/token$/).length;
  }

  private issue(): { access_token: string; expires_in: number } {
    const seconds = this.options.tokenSeconds ?? 3599;
    const token = `eyJ0eXAiOiJKV1QifQ.${randomBytes(24).toString('base64url')}.${randomBytes(16).toString('base64url')}`;
    this.tokens.set(token, Date.now() + seconds * 1000);
    return { access_token: token, expires_in: seconds };
  }

  private oauthError(context: MockContext, status: number, error: string, description: string): void {
    context.json(status, {
      error,
      error_description: `${description}\r\nTrace ID: ${randomBytes(8).toString('hex')}\r\nTimestamp: ${new Date().toISOString()}`,
      error_codes: [Number(/AADSTS(\d+)/.exec(description)?.[1] ?? 0)],
      timestamp: new Date().toISOString(),
    });
  }

  private token(context: MockContext): void {
    const [tenant] = context.params;
    const body = context.body as Record<string, string>;
    if (tenant !== this.options.tenantId) {
      return this.oauthError(context, 400, 'invalid_request', `AADSTS90002: Tenant '${tenant}' not found.`);
    }
    if (body.grant_type !== 'client_credentials') {
      return this.oauthError(
        context,
        400,
        'unsupported_grant_type',
        'AADSTS70003: The app requested an unsupported grant type.',
      );
    }
    if (body.scope !== 'https://vault.azure.net/.default') {
      return this.oauthError(
        context,
        400,
        'invalid_scope',
        `AADSTS1002012: The provided value for scope ${body.scope} is not valid.`,
      );
    }
    if (body.client_id !== this.options.clientId) {
      return this.oauthError(
        context,
        400,
        'unauthorized_client',
        `AADSTS700016: Application with identifier '${body.client_id}' was not found in the directory.`,
      );
    }
    if (body.client_secret !== this.options.clientSecret) {
      return this.oauthError(
        context,
        401,
        'invalid_client',
        'AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.',
      );
    }
    const issued = this.issue();
    context.json(200, {
      token_type: 'Bearer',
      expires_in: issued.expires_in,
      ext_expires_in: issued.expires_in,
      access_token: issued.access_token,
    });
  }

  private imds(context: MockContext): void {
    const managed = this.options.managedIdentity;
    if (!managed)
      return context.json(400, { error: 'invalid_request', error_description: 'Identity not found' });
    if (headerValue(context.request.headers, 'metadata') !== 'true') {
      return context.json(400, {
        error: 'invalid_request',
        error_description: 'Required metadata header not specified',
      });
    }
    const { resource, client_id: clientId } = context.request.query;
    if (resource !== 'https://vault.azure.net') {
      return context.json(400, {
        error: 'invalid_resource',
        error_description: 'AADSTS500011: The resource principal was not found',
      });
    }
    if (managed.clientId && clientId !== managed.clientId) {
      return context.json(400, { error: 'invalid_request', error_description: 'Identity not found' });
    }
    const issued = this.issue();
    const now = Math.floor(Date.now() / 1000);
    // The managed identity endpoint answers its numbers as strings.
    context.json(200, {
      access_token: issued.access_token,
      client_id: clientId ?? '00000000-0000-0000-0000-000000000000',
      expires_in: String(issued.expires_in),
      expires_on: String(now + issued.expires_in),
      ext_expires_in: String(issued.expires_in),
      not_before: String(now),
      resource,
      token_type: 'Bearer',
    });
  }

  private secret(context: MockContext): void {
    const authorization = headerValue(context.request.headers, 'authorization') ?? '';
    const challenge = {
      'www-authenticate': `Bearer authorization="${this.url}/${this.options.tenantId}", resource="https://vault.azure.net"`,
    };
    if (!authorization.startsWith('Bearer ')) {
      return context.json(
        401,
        { error: { code: 'Unauthorized', message: 'AKV10000: Request is missing a Bearer or PoP token.' } },
        challenge,
      );
    }
    const expiry = this.tokens.get(authorization.slice('Bearer '.length));
    if (expiry === undefined) {
      return context.json(
        401,
        { error: { code: 'Unauthorized', message: 'AKV10032: Invalid issuer.' } },
        challenge,
      );
    }
    if (Date.now() >= expiry) {
      return context.json(
        401,
        { error: { code: 'Unauthorized', message: 'AKV10022: Invalid audience or token expired.' } },
        challenge,
      );
    }
    if (context.request.query['api-version'] === undefined) {
      return context.error(400, 'The api-version query parameter is required.', 'BadParameter');
    }
    const [name, version] = context.params;
    const versions = this.secrets.get(name.toLowerCase());
    const found = version ? versions?.find((v) => v.id === version) : versions?.[versions.length - 1];
    if (!found) {
      return context.error(
        404,
        `A secret with (name/id) ${name}${version ? `/${version}` : ''} was not found in this key vault. If you recently deleted this secret you may be able to recover it using the correct recovery command. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125182`,
        'SecretNotFound',
      );
    }
    context.json(200, {
      value: found.value,
      id: `${this.url}/secrets/${name}/${found.id}`,
      attributes: {
        enabled: found.enabled,
        created: found.created,
        updated: found.created,
        recoveryLevel: 'Recoverable+Purgeable',
        recoverableDays: 90,
      },
      tags: {},
    });
  }
}

export async function startAzureKeyVaultMock(options: AzureKeyVaultMockOptions): Promise<AzureKeyVaultMock> {
  return new AzureKeyVaultMock(options).listen();
}
