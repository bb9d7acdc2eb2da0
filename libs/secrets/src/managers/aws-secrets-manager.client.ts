import {
  AmbientCredentials,
  AssumedRoleCredentials,
  CredentialSource,
  StaticCredentials,
  awsServiceEndpoint,
  signAws,
} from './aws-credentials';
import { ManagerHttpResponse, asObject, excerpt, managerHttp, parseJson } from './manager-http';
import {
  SecretLocation,
  SecretManagerClient,
  SecretManagerEnvironment,
  SecretManagerError,
  SecretManagerFailure,
  pickFromText,
} from './secret-manager.types';

export const AWS_AUTH_TYPES = ['accessKey', 'assumedRole', 'serviceRole'] as const;
export type AwsAuthType = (typeof AWS_AUTH_TYPES)[number];

/** Normalised `auth_config` of an `aws_sm` reference (see secret-reference.config.ts). */
export interface AwsSecretsManagerAuthConfig {
  aws_auth_type: AwsAuthType;
  /** Required except for `serviceRole`, which falls back to AWS_REGION / AWS_DEFAULT_REGION. */
  aws_region?: string;
  aws_access_key_id?: string;
  aws_secret_access_key?: string;
  aws_session_token?: string;
  aws_role_arn?: string;
  aws_external_id?: string;
  /** Overrides `https://secretsmanager.<region>.amazonaws.com` (VPC endpoints, local tests). */
  aws_endpoint?: string;
  /** Overrides `https://sts.<region>.amazonaws.com` for `assumedRole`. */
  aws_sts_endpoint?: string;
}

const AUTH_ERRORS = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignature',
  'IncompleteSignatureException',
  'MissingAuthenticationToken',
  'MissingAuthenticationTokenException',
  'InvalidClientTokenId',
  'ExpiredTokenException',
  'ExpiredToken',
  'SignatureDoesNotMatch',
]);

/** A secret version id is a UUID; anything else names a staging label such as AWSPREVIOUS. */
const VERSION_ID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

/**
 * AWS Secrets Manager `GetSecretValue` over the JSON 1.1 protocol, signed with SigV4 for the
 * `secretsmanager` service. `SecretString` is returned as is, or parsed as a JSON object when a
 * key is asked for; `SecretBinary` is decoded from base64 to text.
 */
export class AwsSecretsManagerClient implements SecretManagerClient {
  readonly managerType = 'aws_sm' as const;
  private readonly region: string;
  private readonly endpoint: string;
  private readonly credentials: CredentialSource;

  constructor(
    config: AwsSecretsManagerAuthConfig,
    private readonly environment: SecretManagerEnvironment,
  ) {
    const region =
      config.aws_region || environment.env.AWS_REGION || environment.env.AWS_DEFAULT_REGION || '';
    if (!region) {
      throw new SecretManagerError(
        'invalid_config',
        'aws_region is not set in the auth config, nor AWS_REGION in the gateway environment',
      );
    }
    this.region = region;
    this.endpoint = (config.aws_endpoint ?? awsServiceEndpoint('secretsmanager', region)).replace(/\/+$/, '');
    this.credentials = credentialSource(config, region, environment);
  }

  get target(): string {
    return `${this.endpoint} (region ${this.region}, ${this.credentials.description})`;
  }

  async read(location: SecretLocation): Promise<string> {
    const request: Record<string, string> = { SecretId: location.path };
    const version = location.version ?? null;
    if (version !== null) {
      if (VERSION_ID.test(version)) request.VersionId = version;
      else request.VersionStage = version;
    }
    const describe = `the secret '${location.path}'${version !== null ? ` (version ${version})` : ''}`;
    let answer = await this.call(request);
    if (answer.status !== 200 && errorType(answer).startsWith('ExpiredToken')) {
      // Temporary credentials can expire early (revoked session): fetch new ones and retry once.
      this.credentials.reset();
      answer = await this.call(request);
    }
    if (answer.status !== 200) throw failure(answer, describe);
    const body = asObject(parseJson(answer.text));
    if (!body)
      throw new SecretManagerError('invalid_response', `GetSecretValue answered a non-JSON body`, 200);
    if (typeof body.SecretString === 'string') return pickFromText(body.SecretString, location.key, describe);
    if (typeof body.SecretBinary === 'string') {
      return pickFromText(Buffer.from(body.SecretBinary, 'base64').toString('utf8'), location.key, describe);
    }
    throw new SecretManagerError('invalid_response', `${describe} has neither SecretString nor SecretBinary`);
  }

  private async call(request: Record<string, string>): Promise<ManagerHttpResponse> {
    const body = JSON.stringify(request);
    const url = `${this.endpoint}/`;
    const headers = await signAws({
      method: 'POST',
      url,
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'secretsmanager.GetSecretValue',
      },
      body,
      region: this.region,
      service: 'secretsmanager',
      credentials: await this.credentials.get(),
    });
    return managerHttp({ method: 'POST', url, headers, body }, this.environment.requestTimeoutMs);
  }
}

function credentialSource(
  config: AwsSecretsManagerAuthConfig,
  region: string,
  environment: SecretManagerEnvironment,
): CredentialSource {
  const explicit =
    config.aws_access_key_id && config.aws_secret_access_key
      ? new StaticCredentials({
          accessKeyId: config.aws_access_key_id,
          secretAccessKey: config.aws_secret_access_key,
          sessionToken: config.aws_session_token || undefined,
        })
      : null;
  switch (config.aws_auth_type) {
    case 'accessKey':
      if (!explicit) {
        throw new SecretManagerError(
          'invalid_config',
          'aws_access_key_id and aws_secret_access_key are required for accessKey auth',
        );
      }
      return explicit;
    case 'assumedRole':
      if (!config.aws_role_arn) {
        throw new SecretManagerError('invalid_config', 'aws_role_arn is required for assumedRole auth');
      }
      return new AssumedRoleCredentials(
        explicit ?? new AmbientCredentials(environment, region),
        config.aws_role_arn,
        config.aws_external_id,
        region,
        config.aws_sts_endpoint?.replace(/\/+$/, ''),
        environment,
      );
    case 'serviceRole':
      return new AmbientCredentials(environment, region);
    default:
      throw new SecretManagerError(
        'invalid_config',
        `unknown aws_auth_type '${String((config as { aws_auth_type?: unknown }).aws_auth_type)}'`,
      );
  }
}

/** `__type` may be qualified (`com.amazonaws.secretsmanager#ResourceNotFoundException`). */
function errorType(answer: ManagerHttpResponse): string {
  const body = asObject(parseJson(answer.text));
  const raw =
    (typeof body?.__type === 'string' ? body.__type : undefined) ?? answer.headers['x-amzn-errortype'] ?? '';
  return raw.split('#').pop()!.split(':')[0];
}

function failure(answer: ManagerHttpResponse, describe: string): SecretManagerError {
  const body = asObject(parseJson(answer.text));
  const type = errorType(answer) || `HTTP ${answer.status}`;
  const text = body?.message ?? body?.Message;
  const message = typeof text === 'string' && text ? `: ${excerpt(text)}` : '';
  let reason: SecretManagerFailure = 'upstream_error';
  if (type === 'ResourceNotFoundException') reason = 'not_found';
  else if (type === 'AccessDeniedException') reason = 'forbidden';
  else if (AUTH_ERRORS.has(type) || answer.status === 401) reason = 'unauthenticated';
  else if (answer.status === 403) reason = 'forbidden';
  const what = reason === 'not_found' ? `${describe} was not found` : `GetSecretValue for ${describe} failed`;
  return new SecretManagerError(reason, `${what} (${type}, HTTP ${answer.status})${message}`, answer.status);
}
