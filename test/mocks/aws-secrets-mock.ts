/**
 * Mock of AWS Secrets Manager (`GetSecretValue`, JSON 1.1 protocol at `POST /` with
 * `X-Amz-Target: secretsmanager.GetSecretValue`), of STS `AssumeRole` (query protocol, XML
 * answers) on the same port, and of the EC2 instance metadata credentials (IMDSv2).
 * Every signed call must carry a well-formed SigV4 `Authorization` header whose scope names the
 * mock's region and the right service; the signature itself is recomputed and must match.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { randomBytes, randomUUID } from 'node:crypto';
import { ErrorShape, MockContext, MockServer, RecordedRequest, headerValue } from './mock-server';

export interface AwsKeyPair {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface AwsSecretsMockOptions {
  region?: string;
  /** Long-term keys the mock knows. */
  keys?: AwsKeyPair[];
  /** Roles STS lets a known key assume, with the external id the trust policy requires. */
  roles?: Record<string, { externalId?: string }>;
  /** An instance role served by the metadata endpoints (its credentials are issued like STS ones). */
  instanceRole?: string;
}

export const awsJsonErrorShape: ErrorShape = (status, message, errorType) => ({
  body: {
    __type: errorType ?? (status >= 500 ? 'InternalServiceError' : 'InvalidRequestException'),
    message,
  },
  headers: { 'x-amzn-requestid': randomUUID() },
});

interface StoredSecret {
  name: string;
  arn: string;
  versions: { id: string; stages: string[]; secretString?: string; secretBinary?: string; created: number }[];
}

export class AwsSecretsMock {
  readonly server: MockServer;
  readonly region: string;
  private readonly keys = new Map<string, AwsKeyPair & { expiresAt?: number }>();
  private readonly secrets = new Map<string, StoredSecret>();

  constructor(private readonly options: AwsSecretsMockOptions = {}) {
    this.region = options.region ?? 'us-east-1';
    for (const key of options.keys ?? []) this.keys.set(key.accessKeyId, key);
    this.server = new MockServer({
      name: 'aws-secrets-manager',
      errorShape: awsJsonErrorShape,
      routes: [
        { method: 'POST', path: '/', handler: (context) => this.dispatch(context) },
        { method: 'PUT', path: '/latest/api/token', handler: (context) => this.imdsToken(context) },
        {
          method: 'GET',
          path: /^\/latest\/meta-data\/iam\/security-credentials\/(.*)$/,
          handler: (context) => this.imdsCredentials(context),
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

  /** Creates a secret, or adds a version that becomes AWSCURRENT (the former one AWSPREVIOUS). */
  putSecret(name: string, value: { string?: string; binary?: Buffer }): string {
    const existing = this.secrets.get(name);
    const secret: StoredSecret = existing ?? {
      name,
      arn: `arn:aws:secretsmanager:${this.region}:123456789012:secret:${name}-${randomBytes(3).toString('hex')}`,
      versions: [],
    };
    for (const version of secret.versions) {
      version.stages = version.stages.includes('AWSCURRENT') ? ['AWSPREVIOUS'] : [];
    }
    const id = randomUUID();
    secret.versions.push({
      id,
      stages: ['AWSCURRENT'],
      secretString: value.string,
      secretBinary: value.binary?.toString('base64'),
      created: Date.now() / 1000,
    });
    this.secrets.set(name, secret);
    return id;
  }

  arnOf(name: string): string | undefined {
    return this.secrets.get(name)?.arn;
  }

  /** GetSecretValue calls received since start or the last reset. */
  get reads(): number {
    return this.server.requestsTo(
      (r) => headerValue(r.headers, 'x-amz-target') === 'secretsmanager.GetSecretValue',
    ).length;
  }

  get assumeRoleCalls(): number {
    return this.server.requestsTo((r) => (r.body as Record<string, unknown>)?.Action === 'AssumeRole').length;
  }

  private dispatch(context: MockContext): Promise<void> | void {
    const target = headerValue(context.request.headers, 'x-amz-target');
    if (target !== undefined) return this.secretsManager(context, target);
    return this.sts(context);
  }

  private async secretsManager(context: MockContext, target: string): Promise<void> {
    const problem = await this.checkSignature(context.request, 'secretsmanager');
    if (problem) return context.error(problem.status, problem.message, problem.type);
    if (
      !String(headerValue(context.request.headers, 'content-type')).startsWith('application/x-amz-json-1.1')
    ) {
      return context.error(400, 'Content-Type must be application/x-amz-json-1.1', 'SerializationException');
    }
    if (target !== 'secretsmanager.GetSecretValue') {
      return context.error(
        400,
        `Operation ${target} is not supported by this mock`,
        'UnknownOperationException',
      );
    }
    const { SecretId, VersionId, VersionStage } = context.body;
    if (typeof SecretId !== 'string' || SecretId === '') {
      return context.error(
        400,
        "1 validation error detected: Value null at 'secretId' failed to satisfy constraint",
        'ValidationException',
      );
    }
    const secret = [...this.secrets.values()].find((s) => s.name === SecretId || s.arn === SecretId);
    if (!secret) {
      return context.error(
        400,
        "Secrets Manager can't find the specified secret.",
        'ResourceNotFoundException',
      );
    }
    const version = secret.versions.find((v) =>
      VersionId
        ? v.id === VersionId
        : v.stages.includes(typeof VersionStage === 'string' ? VersionStage : 'AWSCURRENT'),
    );
    if (!version) {
      return context.error(
        400,
        "Secrets Manager can't find the specified secret value for staging label or version id.",
        'ResourceNotFoundException',
      );
    }
    return context.json(
      200,
      {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.id,
        ...(version.secretString !== undefined ? { SecretString: version.secretString } : {}),
        ...(version.secretBinary !== undefined ? { SecretBinary: version.secretBinary } : {}),
        VersionStages: version.stages,
        CreatedDate: version.created,
      },
      { 'x-amzn-requestid': randomUUID() },
    );
  }

  private async sts(context: MockContext): Promise<void> {
    const body = context.body as Record<string, string>;
    if (body.Action !== 'AssumeRole')
      return this.stsError(context, 400, 'InvalidAction', `Could not find operation ${body.Action}`);
    const problem = await this.checkSignature(context.request, 'sts');
    if (problem)
      return this.stsError(
        context,
        problem.status === 400 ? 403 : problem.status,
        problem.type,
        problem.message,
      );
    const role = this.options.roles?.[body.RoleArn];
    if (!role) {
      return this.stsError(
        context,
        403,
        'AccessDenied',
        `User is not authorized to perform: sts:AssumeRole on resource: ${body.RoleArn}`,
      );
    }
    if (role.externalId !== undefined && body.ExternalId !== role.externalId) {
      return this.stsError(
        context,
        403,
        'AccessDenied',
        `User is not authorized to perform: sts:AssumeRole on resource: ${body.RoleArn}`,
      );
    }
    if (!body.RoleSessionName)
      return this.stsError(context, 400, 'ValidationError', 'RoleSessionName is required');
    const issued = this.issueTemporary(Number(body.DurationSeconds ?? 3600));
    const xml = `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:${body.RoleSessionName}</AssumedRoleId>
      <Arn>${body.RoleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/')}/${body.RoleSessionName}</Arn>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${issued.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${issued.secretAccessKey}</SecretAccessKey>
      <SessionToken>${issued.sessionToken}</SessionToken>
      <Expiration>${new Date(issued.expiresAt!).toISOString()}</Expiration>
    </Credentials>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata>
</AssumeRoleResponse>`;
    context.send(200, xml, { 'content-type': 'text/xml' });
  }

  private stsError(context: MockContext, status: number, code: string, message: string): void {
    const xml = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
    context.send(status, xml, { 'content-type': 'text/xml' });
  }

  private issueTemporary(seconds: number): Required<AwsKeyPair> & { expiresAt: number } {
    const issued = {
      accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: `FwoGZXIvYXdzE${randomBytes(48).toString('base64')}`,
      expiresAt: Date.now() + seconds * 1000,
    };
    this.keys.set(issued.accessKeyId, issued);
    return issued;
  }

  private imdsToken(context: MockContext): void {
    if (!this.options.instanceRole) return context.send(404, 'Not Found', { 'content-type': 'text/plain' });
    if (!headerValue(context.request.headers, 'x-aws-ec2-metadata-token-ttl-seconds')) {
      return context.send(400, 'Bad Request', { 'content-type': 'text/plain' });
    }
    context.send(200, `imds-${randomBytes(12).toString('hex')}`, { 'content-type': 'text/plain' });
  }

  private imdsCredentials(context: MockContext): void {
    const role = this.options.instanceRole;
    if (!role) return context.send(404, 'Not Found', { 'content-type': 'text/plain' });
    if (!String(headerValue(context.request.headers, 'x-aws-ec2-metadata-token') ?? '').startsWith('imds-')) {
      return context.send(401, 'Unauthorized', { 'content-type': 'text/plain' });
    }
    const [name] = context.params;
    if (name === '') return context.send(200, role, { 'content-type': 'text/plain' });
    if (name !== role) return context.send(404, 'Not Found', { 'content-type': 'text/plain' });
    const issued = this.issueTemporary(6 * 3600);
    context.json(200, {
      Code: 'Success',
      LastUpdated: new Date().toISOString(),
      Type: 'AWS-HMAC',
      AccessKeyId: issued.accessKeyId,
      SecretAccessKey: issued.secretAccessKey,
      Token: issued.sessionToken,
      Expiration: new Date(issued.expiresAt).toISOString(),
    });
  }

  private async checkSignature(
    request: RecordedRequest,
    service: string,
  ): Promise<{ status: number; message: string; type: string } | undefined> {
    const authorization = headerValue(request.headers, 'authorization') ?? '';
    const parsed =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    if (!parsed) {
      return {
        status: 400,
        message: 'Missing Authentication Token',
        type: 'MissingAuthenticationTokenException',
      };
    }
    const [, accessKeyId, date, region, signedService, signedHeaderList, signature] = parsed;
    const amzDate = headerValue(request.headers, 'x-amz-date');
    if (!amzDate || !amzDate.startsWith(date)) {
      return {
        status: 400,
        message: 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP',
        type: 'IncompleteSignatureException',
      };
    }
    if (signedService !== service) {
      return {
        status: 400,
        message: `Credential should be scoped to correct service: '${service}'.`,
        type: 'InvalidSignatureException',
      };
    }
    if (region !== this.region) {
      return {
        status: 400,
        message: `Credential should be scoped to a valid region, not '${region}'.`,
        type: 'InvalidSignatureException',
      };
    }
    const signedHeaders = signedHeaderList.split(';');
    if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date')) {
      return {
        status: 400,
        message: 'Signed headers must include host and x-amz-date',
        type: 'IncompleteSignatureException',
      };
    }
    const key = this.keys.get(accessKeyId);
    if (!key || (key.expiresAt !== undefined && Date.now() > key.expiresAt)) {
      return {
        status: 400,
        message: 'The security token included in the request is invalid.',
        type: 'UnrecognizedClientException',
      };
    }
    if (key.sessionToken && headerValue(request.headers, 'x-amz-security-token') !== key.sessionToken) {
      return {
        status: 400,
        message: 'The security token included in the request is invalid.',
        type: 'UnrecognizedClientException',
      };
    }
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) {
      const value = request.headers[name];
      headers[name] = Array.isArray(value) ? value.join(',') : (value ?? '');
    }
    // The payload hash header is signed only when the client sent it (SDKs for S3 do; others need not).
    const signer = new SignatureV4({
      credentials: key,
      region,
      service,
      sha256: Sha256,
      uriEscapePath: true,
      applyChecksum: signedHeaders.includes('x-amz-content-sha256'),
    });
    const signingDate = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const signed = await signer.sign(
      new HttpRequest({
        method: request.method,
        protocol: 'http:',
        hostname: '127.0.0.1',
        path: request.path,
        query: request.query,
        headers,
        body: request.rawBody,
      }),
      { signingDate, signableHeaders: new Set(signedHeaders) },
    );
    const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization ?? ''))?.[1];
    if (expected !== signature) {
      return {
        status: 400,
        message:
          'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
        type: 'InvalidSignatureException',
      };
    }
    return undefined;
  }
}

export async function startAwsSecretsMock(options: AwsSecretsMockOptions = {}): Promise<AwsSecretsMock> {
  return new AwsSecretsMock(options).listen();
}
