import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { asObject, excerpt, managerHttp, parseJson } from './manager-http';
import { SecretManagerEnvironment, SecretManagerError } from './secret-manager.types';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Epoch ms when temporary credentials stop working; undefined for long-term keys. */
  expiresAt?: number;
}

/** Temporary credentials are renewed this long before they expire. */
const RENEW_BEFORE_MS = 5 * 60 * 1000;

export interface CredentialSource {
  /** Human description for error messages ("the access key AKIA…", "role arn:…"). */
  readonly description: string;
  get(): Promise<AwsCredentials>;
  /** Forgets cached temporary credentials (after the service said they expired). */
  reset(): void;
}

/** AWS endpoints of a region; China regions live under amazonaws.com.cn. */
export function awsServiceEndpoint(service: string, region: string): string {
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `https://${service}.${region}.${suffix}`;
}

/** Signs a request with SigV4 and answers the headers to send (including host and authorization). */
export async function signAws(input: {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
}): Promise<Record<string, string>> {
  const url = new URL(input.url);
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  const signer = new SignatureV4({
    service: input.service,
    region: input.region,
    credentials: {
      accessKeyId: input.credentials.accessKeyId,
      secretAccessKey: input.credentials.secretAccessKey,
      sessionToken: input.credentials.sessionToken,
    },
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    new HttpRequest({
      method: input.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { ...input.headers, host: url.host },
      body: input.body,
    }),
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = String(value);
  return headers;
}

/** Long-term keys given in the reference's auth config. */
export class StaticCredentials implements CredentialSource {
  constructor(private readonly credentials: AwsCredentials) {}
  get description(): string {
    return `access key ${this.credentials.accessKeyId}`;
  }
  async get(): Promise<AwsCredentials> {
    return this.credentials;
  }
  reset(): void {
    // Nothing cached: long-term keys do not expire.
  }
}

/** Caches what `fetch` answers until shortly before it expires; one fetch at a time. */
abstract class CachedCredentials implements CredentialSource {
  private cached: AwsCredentials | null = null;
  private pending: Promise<AwsCredentials> | null = null;
  abstract readonly description: string;
  protected abstract fetch(): Promise<AwsCredentials>;

  async get(): Promise<AwsCredentials> {
    const cached = this.cached;
    if (cached && (cached.expiresAt === undefined || Date.now() < cached.expiresAt - RENEW_BEFORE_MS)) {
      return cached;
    }
    this.pending ??= this.fetch().finally(() => {
      this.pending = null;
    });
    this.cached = await this.pending;
    return this.cached;
  }

  reset(): void {
    this.cached = null;
  }
}

/**
 * The gateway's own identity (the `serviceRole` auth type), found the way AWS SDKs look for it:
 * environment keys, then a web identity token file (EKS), then the container credentials
 * endpoint (ECS), then EC2 instance metadata (IMDSv2).
 */
export class AmbientCredentials extends CachedCredentials {
  readonly description = "the gateway's own AWS identity";

  constructor(
    private readonly environment: SecretManagerEnvironment,
    private readonly region: string,
  ) {
    super();
  }

  protected async fetch(): Promise<AwsCredentials> {
    const env = this.environment.env;
    if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
      return {
        accessKeyId: env.AWS_ACCESS_KEY_ID,
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
        sessionToken: env.AWS_SESSION_TOKEN || undefined,
      };
    }
    if (env.AWS_WEB_IDENTITY_TOKEN_FILE && env.AWS_ROLE_ARN) return this.webIdentity();
    if (env.AWS_CONTAINER_CREDENTIALS_FULL_URI || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) {
      return this.container();
    }
    if ((env.AWS_EC2_METADATA_DISABLED ?? '').toLowerCase() !== 'true') return this.instanceMetadata();
    throw new SecretManagerError(
      'invalid_config',
      'no AWS credentials in the gateway environment (AWS_ACCESS_KEY_ID, web identity, container or instance metadata)',
    );
  }

  private async webIdentity(): Promise<AwsCredentials> {
    const env = this.environment.env;
    let token: string;
    try {
      token = this.environment.readFile(env.AWS_WEB_IDENTITY_TOKEN_FILE!).trim();
    } catch (error) {
      throw new SecretManagerError(
        'invalid_config',
        `cannot read AWS_WEB_IDENTITY_TOKEN_FILE ${env.AWS_WEB_IDENTITY_TOKEN_FILE}: ${(error as Error).message}`,
      );
    }
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || this.region;
    const endpoint = env.AWS_STS_ENDPOINT || awsServiceEndpoint('sts', region);
    const body = new URLSearchParams({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      RoleArn: env.AWS_ROLE_ARN!,
      RoleSessionName: env.AWS_ROLE_SESSION_NAME || `switchboard-${Date.now()}`,
      WebIdentityToken: token,
    }).toString();
    // AssumeRoleWithWebIdentity is the one STS call that is not signed: the token is the proof.
    const answer = await managerHttp(
      {
        method: 'POST',
        url: `${endpoint}/`,
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
        body,
      },
      this.environment.requestTimeoutMs,
    );
    return parseStsCredentials(answer.status, answer.text, `web identity role ${env.AWS_ROLE_ARN}`);
  }

  private async container(): Promise<AwsCredentials> {
    const env = this.environment.env;
    const url =
      env.AWS_CONTAINER_CREDENTIALS_FULL_URI ||
      `http://169.254.170.2${env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    let authorization = env.AWS_CONTAINER_AUTHORIZATION_TOKEN;
    if (!authorization && env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE) {
      authorization = this.environment.readFile(env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE).trim();
    }
    if (authorization) headers.authorization = authorization;
    const answer = await managerHttp({ method: 'GET', url, headers }, this.environment.requestTimeoutMs);
    if (answer.status !== 200) {
      throw new SecretManagerError(
        'unauthenticated',
        `the container credentials endpoint answered HTTP ${answer.status}`,
        answer.status,
      );
    }
    return credentialsFromJson(answer.text, 'the container credentials endpoint');
  }

  private async instanceMetadata(): Promise<AwsCredentials> {
    const base = (this.environment.env.AWS_EC2_METADATA_SERVICE_ENDPOINT || 'http://169.254.169.254').replace(
      /\/+$/,
      '',
    );
    // Instance metadata is absent off EC2; do not let a reference wait the full request timeout.
    const timeout = Math.min(this.environment.requestTimeoutMs, 2_000);
    const session = await managerHttp(
      {
        method: 'PUT',
        url: `${base}/latest/api/token`,
        headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' },
      },
      timeout,
    ).catch((error: SecretManagerError) => {
      throw new SecretManagerError(
        'invalid_config',
        `no AWS credentials in the gateway environment, and instance metadata is not available (${error.message})`,
      );
    });
    if (session.status !== 200) {
      throw new SecretManagerError(
        'invalid_config',
        `instance metadata refused a session token (HTTP ${session.status})`,
        session.status,
      );
    }
    const headers = { 'x-aws-ec2-metadata-token': session.text.trim() };
    const roles = await managerHttp(
      { method: 'GET', url: `${base}/latest/meta-data/iam/security-credentials/`, headers },
      timeout,
    );
    const role = roles.status === 200 ? roles.text.split('\n')[0]?.trim() : '';
    if (!role) {
      throw new SecretManagerError('invalid_config', 'this instance has no IAM role attached', roles.status);
    }
    const answer = await managerHttp(
      {
        method: 'GET',
        url: `${base}/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`,
        headers,
      },
      timeout,
    );
    if (answer.status !== 200) {
      throw new SecretManagerError(
        'unauthenticated',
        `instance metadata answered HTTP ${answer.status} for the role credentials`,
        answer.status,
      );
    }
    return credentialsFromJson(answer.text, 'instance metadata');
  }
}

/** STS AssumeRole from a source identity (the `assumedRole` auth type). */
export class AssumedRoleCredentials extends CachedCredentials {
  constructor(
    private readonly source: CredentialSource,
    private readonly roleArn: string,
    private readonly externalId: string | undefined,
    private readonly region: string,
    private readonly stsEndpoint: string | undefined,
    private readonly environment: SecretManagerEnvironment,
  ) {
    super();
  }

  get description(): string {
    return `role ${this.roleArn}`;
  }

  protected async fetch(): Promise<AwsCredentials> {
    const endpoint = this.stsEndpoint ?? awsServiceEndpoint('sts', this.region);
    const params: Record<string, string> = {
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: this.roleArn,
      RoleSessionName: `switchboard-${Date.now()}`,
      DurationSeconds: '3600',
    };
    if (this.externalId) params.ExternalId = this.externalId;
    const body = new URLSearchParams(params).toString();
    const url = `${endpoint}/`;
    const headers = await signAws({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
      region: this.region,
      service: 'sts',
      credentials: await this.source.get(),
    });
    const answer = await managerHttp(
      { method: 'POST', url, headers, body },
      this.environment.requestTimeoutMs,
    );
    return parseStsCredentials(answer.status, answer.text, `role ${this.roleArn}`);
  }
}

function xmlField(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return match ? decodeXml(match[1]) : undefined;
}

function decodeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Reads the Credentials element of an STS answer (XML), or turns its error into ours. */
export function parseStsCredentials(status: number, xml: string, what: string): AwsCredentials {
  if (status !== 200) {
    const code = xmlField(xml, 'Code') ?? `HTTP ${status}`;
    const message = xmlField(xml, 'Message');
    throw new SecretManagerError(
      status >= 500 ? 'upstream_error' : 'unauthenticated',
      `STS refused to assume ${what}: ${code}${message ? ` (${excerpt(message)})` : ''}`,
      status,
    );
  }
  const accessKeyId = xmlField(xml, 'AccessKeyId');
  const secretAccessKey = xmlField(xml, 'SecretAccessKey');
  const sessionToken = xmlField(xml, 'SessionToken');
  const expiration = xmlField(xml, 'Expiration');
  if (!accessKeyId || !secretAccessKey || !sessionToken) {
    throw new SecretManagerError('invalid_response', `STS answered without credentials for ${what}`);
  }
  const expiresAt = expiration ? Date.parse(expiration) : NaN;
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken,
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : Date.now() + 15 * 60 * 1000,
  };
}

function credentialsFromJson(text: string, what: string): AwsCredentials {
  const body = asObject(parseJson(text));
  const accessKeyId = body?.AccessKeyId;
  const secretAccessKey = body?.SecretAccessKey;
  if (typeof accessKeyId !== 'string' || typeof secretAccessKey !== 'string') {
    throw new SecretManagerError('invalid_response', `${what} answered without AccessKeyId/SecretAccessKey`);
  }
  const expiresAt = typeof body?.Expiration === 'string' ? Date.parse(body.Expiration) : NaN;
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken: typeof body?.Token === 'string' ? body.Token : undefined,
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : undefined,
  };
}
