import { Injectable, Logger } from '@nestjs/common';
import { createHash, createSign } from 'node:crypto';
import type { ProviderCredentials } from '@switchboard/providers';
import { awsServiceEndpoint, signAws } from '@switchboard/secrets';
import type { ServiceAccount } from './provider-settings';

const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const GOOGLE_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const ENTRA_AUTHORITY = 'https://login.microsoftonline.com';
const AZURE_OPENAI_SCOPE = 'https://cognitiveservices.azure.com/.default';
const IMDS_ENDPOINT = 'http://169.254.169.254/metadata/identity/oauth2/token';
const REQUEST_TIMEOUT_MS = 10_000;
/** Failures are remembered briefly, so a broken credential does not cost one call per request. */
const ERROR_TTL_MS = 2_000;

export interface MintedToken {
  token: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * An access token a provider's stored credentials must be exchanged for: a Vertex AI service
 * account (OAuth 2.0 JWT bearer grant), an Azure Entra ID identity (client credentials or
 * managed identity), or a Bedrock role (STS AssumeRole). `cacheKey` hashes every input, so changed credentials mint a new token.
 */
export interface TokenRequest {
  readonly cacheKey: string;
  /** For error messages: never a secret. */
  readonly description: string;
  mint(): Promise<MintedToken>;
  apply(credentials: ProviderCredentials, token: string): void;
}

function hash(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

async function postForm(url: string, form: Record<string, string>, what: string): Promise<MintedToken> {
  return readToken(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    }).catch((error: Error) => {
      throw new Error(`${what} could not be reached (${error.message})`);
    }),
    what,
  );
}

async function readToken(response: Response, what: string): Promise<MintedToken> {
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Described below.
  }
  if (!response.ok || typeof body.access_token !== 'string') {
    const reason =
      typeof body.error_description === 'string'
        ? body.error_description.split('\n')[0]
        : typeof body.error === 'string'
          ? body.error
          : `HTTP ${response.status}`;
    throw new Error(`${what} refused a token: ${reason.slice(0, 300)}`);
  }
  const lifetime = Number(body.expires_in ?? 3600);
  return {
    token: body.access_token,
    expiresAt: Date.now() + (Number.isFinite(lifetime) && lifetime > 0 ? lifetime : 3600) * 1000,
  };
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A signed JWT assertion for Google's token endpoint (RFC 7523). */
export function serviceAccountAssertion(account: ServiceAccount, now = Date.now()): string {
  const issuedAt = Math.floor(now / 1000);
  const header = {
    alg: 'RS256',
    typ: 'JWT',
    ...(account.private_key_id ? { kid: account.private_key_id } : {}),
  };
  const claims = {
    iss: account.client_email,
    scope: GOOGLE_SCOPE,
    aud: account.token_uri ?? GOOGLE_TOKEN_URI,
    iat: issuedAt,
    exp: issuedAt + 3600,
  };
  const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(account.private_key);
  return `${unsigned}.${base64url(signature)}`;
}

function xmlField(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return match
    ? match[1]
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&apos;/g, "'")
        .replace(/&amp;/g, '&')
    : undefined;
}

/**
 * STS AssumeRole for a Bedrock integration's `aws_role_arn`, signed with the gateway's own AWS
 * identity from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
 * The temporary credentials travel as one JSON token.
 */
async function assumeRole(
  roleArn: string,
  externalId: string | undefined,
  region: string,
  endpoint: string | undefined,
): Promise<MintedToken> {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  const what = `AWS STS for role ${roleArn}`;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      `${what}: the gateway has no AWS identity to assume the role with (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`,
    );
  }
  const params: Record<string, string> = {
    Action: 'AssumeRole',
    Version: '2011-06-15',
    RoleArn: roleArn,
    RoleSessionName: `switchboard-${Date.now()}`,
    DurationSeconds: '3600',
    ...(externalId ? { ExternalId: externalId } : {}),
  };
  const body = new URLSearchParams(params).toString();
  const url = `${(endpoint ?? awsServiceEndpoint('sts', region)).replace(/\/+$/, '')}/`;
  const headers = await signAws({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
    region,
    service: 'sts',
    credentials: { accessKeyId, secretAccessKey, sessionToken: process.env.AWS_SESSION_TOKEN || undefined },
  });
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(`${what} could not be reached (${(error as Error).message})`);
  }
  const xml = await response.text();
  const keyId = xmlField(xml, 'AccessKeyId');
  const secret = xmlField(xml, 'SecretAccessKey');
  const session = xmlField(xml, 'SessionToken');
  if (!response.ok || !keyId || !secret || !session) {
    const reason = xmlField(xml, 'Message') ?? xmlField(xml, 'Code') ?? `HTTP ${response.status}`;
    throw new Error(`${what} refused the role: ${reason.slice(0, 300)}`);
  }
  const expiration = Date.parse(xmlField(xml, 'Expiration') ?? '');
  return {
    token: JSON.stringify({ accessKeyId: keyId, secretAccessKey: secret, sessionToken: session }),
    expiresAt: Number.isFinite(expiration) ? expiration : Date.now() + 3600_000,
  };
}

/** The token a provider's settings need, or null when its credentials are used as they are. */
export function tokenRequestFor(provider: string, settings: Record<string, unknown>): TokenRequest | null {
  if (provider === 'bedrock' && settings.aws_auth_type === 'assumedRole') {
    const roleArn = String(settings.aws_role_arn);
    const externalId = settings.aws_external_id as string | undefined;
    const region = String(settings.aws_region);
    const endpoint = settings.aws_sts_endpoint as string | undefined;
    return {
      cacheKey: hash(['aws-role', roleArn, externalId ?? null, region, endpoint ?? null]),
      description: `AWS role ${roleArn}`,
      mint: () => assumeRole(roleArn, externalId, region, endpoint),
      apply: (credentials, token) => {
        const temporary = JSON.parse(token) as {
          accessKeyId: string;
          secretAccessKey: string;
          sessionToken: string;
        };
        credentials.awsAccessKeyId = temporary.accessKeyId;
        credentials.awsSecretAccessKey = temporary.secretAccessKey;
        credentials.awsSessionToken = temporary.sessionToken;
      },
    };
  }
  if (provider === 'vertex-ai') {
    const account = settings.vertex_service_account_json as ServiceAccount | undefined;
    if (!account || typeof account !== 'object') return null;
    const tokenUri = account.token_uri ?? GOOGLE_TOKEN_URI;
    return {
      cacheKey: hash(['vertex', account.client_email, account.private_key, tokenUri]),
      description: `service account ${account.client_email}`,
      mint: () =>
        postForm(
          tokenUri,
          {
            grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
            assertion: serviceAccountAssertion(account),
          },
          `Google's token endpoint (${new URL(tokenUri).host}) for ${account.client_email}`,
        ),
      apply: (credentials, token) => {
        credentials.vertexAccessToken = token;
      },
    };
  }
  if (provider === 'azure-openai') {
    const mode = settings.azure_auth_mode;
    const scope = (settings.azure_entra_scope as string | undefined) ?? AZURE_OPENAI_SCOPE;
    const apply = (credentials: ProviderCredentials, token: string) => {
      credentials.azureEntraToken = token;
    };
    if (mode === 'entra') {
      const tenant = String(settings.azure_entra_tenant_id);
      const clientId = String(settings.azure_entra_client_id);
      const secret = String(settings.azure_entra_client_secret);
      const authority = ((settings.azure_authority_host as string | undefined) ?? ENTRA_AUTHORITY).replace(
        /\/+$/,
        '',
      );
      return {
        cacheKey: hash(['entra', authority, tenant, clientId, secret, scope]),
        description: `Entra ID application ${clientId}`,
        mint: () =>
          postForm(
            `${authority}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`,
            { grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope },
            `Entra ID (tenant ${tenant}) for application ${clientId}`,
          ),
        apply,
      };
    }
    if (mode === 'managed') {
      const clientId = settings.azure_managed_client_id as string | undefined;
      const resource = scope.replace(/\/\.default$/, '');
      return {
        cacheKey: hash(['managed', clientId ?? null, resource]),
        description: `managed identity${clientId ? ` ${clientId}` : ''}`,
        mint: () => managedIdentityToken(resource, clientId),
        apply,
      };
    }
  }
  return null;
}

/** Azure managed identity: App Service / Container Apps endpoint when present, else IMDS. */
async function managedIdentityToken(resource: string, clientId: string | undefined): Promise<MintedToken> {
  const endpoint = process.env.IDENTITY_ENDPOINT;
  const secretHeader = process.env.IDENTITY_HEADER;
  const what = 'the Azure managed identity endpoint';
  const query = new URLSearchParams({ resource, ...(clientId ? { client_id: clientId } : {}) });
  let response: Response;
  try {
    response =
      endpoint && secretHeader
        ? await fetch(`${endpoint}?${query.toString()}&api-version=2019-08-01`, {
            headers: { 'x-identity-header': secretHeader },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          })
        : await fetch(`${IMDS_ENDPOINT}?${query.toString()}&api-version=2018-02-01`, {
            headers: { metadata: 'true' },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
  } catch (error) {
    throw new Error(`${what} could not be reached (${(error as Error).message})`);
  }
  return readToken(response, what);
}

interface CachedToken {
  value?: MintedToken;
  refreshAt: number;
  inflight?: Promise<string>;
  error?: Error;
  errorUntil: number;
}

/**
 * Minted provider tokens in memory: a lookup reads them without waiting; they are renewed in the
 * background when 80% of their life has passed, and minted (once, however many ask) when absent.
 */
@Injectable()
export class ProviderTokens {
  private readonly logger = new Logger(ProviderTokens.name);
  private readonly cache = new Map<string, CachedToken>();

  peek(request: TokenRequest): string | undefined {
    const entry = this.cache.get(request.cacheKey);
    const value = entry?.value;
    if (!value || Date.now() >= value.expiresAt - 30_000) return undefined;
    if (Date.now() >= (entry?.refreshAt ?? 0)) void this.mint(request).catch(() => undefined);
    return value.token;
  }

  async get(request: TokenRequest): Promise<string> {
    const cached = this.peek(request);
    if (cached !== undefined) return cached;
    const entry = this.cache.get(request.cacheKey);
    if (entry?.error && Date.now() < entry.errorUntil) throw entry.error;
    return this.mint(request);
  }

  clear(): void {
    this.cache.clear();
  }

  private mint(request: TokenRequest): Promise<string> {
    let entry = this.cache.get(request.cacheKey);
    if (!entry) {
      if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value as string);
      entry = { errorUntil: 0, refreshAt: 0 };
      this.cache.set(request.cacheKey, entry);
    }
    if (entry.inflight) return entry.inflight;
    const target = entry;
    target.inflight = request
      .mint()
      .then((minted) => {
        const now = Date.now();
        target.value = minted;
        target.refreshAt = now + (minted.expiresAt - now) * 0.8;
        target.error = undefined;
        return minted.token;
      })
      .catch((error: Error) => {
        target.error = error;
        target.errorUntil = Date.now() + ERROR_TTL_MS;
        // A token still valid keeps serving; the next renewal attempt waits a little.
        target.refreshAt = Date.now() + ERROR_TTL_MS;
        this.logger.warn(`Token for ${request.description} could not be minted: ${error.message}`);
        throw error;
      })
      .finally(() => {
        target.inflight = undefined;
      });
    return target.inflight;
  }
}
