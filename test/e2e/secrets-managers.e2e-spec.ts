/**
 * The secret-manager clients and the resolver against local servers that speak each manager's
 * HTTP API (test/mocks/vault-mock.ts, aws-secrets-mock.ts, azure-keyvault-mock.ts). No database
 * is involved, so the suite runs in the SQLite project only.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../libs/common/src';
import {
  SecretManagerEnvironment,
  SecretManagerError,
  SecretReferenceTarget,
  SecretResolver,
  createSecretManagerClient,
  validateSecretAuthConfig,
} from '../../libs/secrets/src';
import { AwsSecretsMock, startAwsSecretsMock } from '../mocks/aws-secrets-mock';
import { AzureKeyVaultMock, startAzureKeyVaultMock } from '../mocks/azure-keyvault-mock';
import { VaultMock, startVaultMock } from '../mocks/vault-mock';
import { currentDialect } from '../support/test-app';

/** The manager clients use no database: they run once, in the SQLite project, and say so elsewhere. */
function describeOnce(name: string, body: () => void): void {
  if (currentDialect() === 'sqlite') describe(name, body);
  else
    describe.skip(
      `${name} [${currentDialect()}: skipped, uses no database; runs in the SQLite project]`,
      body,
    );
}

function environment(env: Record<string, string> = {}): SecretManagerEnvironment {
  return { env, readFile: (path) => readFileSync(path, 'utf8'), requestTimeoutMs: 3_000 };
}

/** A port nothing listens on: bound, then released. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

async function failure(promise: Promise<unknown>): Promise<SecretManagerError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SecretManagerError) return error;
    throw error;
  }
  throw new Error('expected the read to fail');
}

async function appFailure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the resolve to fail');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const VAULT_TOKEN = 'hvs.root-token-for-tests';
const ROLE_ID = '8c5c3c1e-0000-4000-8000-000000000001';
const SECRET_ID = 'f2a1b7d4-0000-4000-8000-000000000002';

describeOnce('secret managers: HashiCorp Vault KV v2 [sqlite]', () => {
  let vault: VaultMock;
  let dir: string;

  beforeAll(async () => {
    vault = await startVaultMock({
      tokens: [VAULT_TOKEN],
      mounts: ['secret', 'kv-team'],
      approle: { roleId: ROLE_ID, secretId: SECRET_ID, leaseSeconds: 3600 },
      kubernetes: { role: 'gateway', jwt: 'eyJhbGciOiJSUzI1NiJ9.k8s-service-account.sig' },
    });
    vault.put('llm/openai', { api_key: 'sk-vault-openai-1', org: 'org-1', limits: { rpm: 10 } });
    vault.put('llm/openai', { api_key: 'sk-vault-openai-2', org: 'org-1' });
    vault.put('shared/anthropic', { api_key: 'sk-ant-team' }, { mount: 'kv-team', namespace: 'team-a' });
    dir = mkdtempSync(join(tmpdir(), 'sb-vault-'));
  });
  afterAll(async () => {
    await vault.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => vault.server.reset());

  const tokenConfig = () =>
    validateSecretAuthConfig('hashicorp_vault', {
      vault_auth_type: 'token',
      vault_addr: `${vault.url}/`,
      vault_token: VAULT_TOKEN,
    });

  it('reads a key of the latest version with a token, sending X-Vault-Token', async () => {
    const client = createSecretManagerClient('hashicorp_vault', tokenConfig() as never, environment());
    await expect(client.read({ path: 'llm/openai', key: 'api_key' })).resolves.toBe('sk-vault-openai-2');
    const request = vault.server.lastRequest();
    expect(request?.path).toBe('/v1/secret/data/llm/openai');
    expect(request?.headers['x-vault-token']).toBe(VAULT_TOKEN);
  });

  it('reads an older version, and the whole secret as JSON when no key is given', async () => {
    const client = createSecretManagerClient('hashicorp_vault', tokenConfig() as never, environment());
    await expect(client.read({ path: 'llm/openai', key: 'api_key', version: '1' })).resolves.toBe(
      'sk-vault-openai-1',
    );
    expect(vault.server.lastRequest()?.query.version).toBe('1');
    expect(JSON.parse(await client.read({ path: 'llm/openai' }))).toEqual({
      api_key: 'sk-vault-openai-2',
      org: 'org-1',
    });
    // A structured field comes back as its JSON text.
    await expect(client.read({ path: 'llm/openai', key: 'limits', version: '1' })).resolves.toBe(
      '{"rpm":10}',
    );
  });

  it('reads from another mount inside a namespace (X-Vault-Namespace)', async () => {
    const config = validateSecretAuthConfig('hashicorp_vault', {
      vault_auth_type: 'token',
      vault_addr: vault.url,
      vault_token: VAULT_TOKEN,
      vault_namespace: 'team-a',
      vault_mount: 'kv-team',
    });
    const client = createSecretManagerClient('hashicorp_vault', config as never, environment());
    await expect(client.read({ path: 'shared/anthropic', key: 'api_key' })).resolves.toBe('sk-ant-team');
    expect(vault.server.lastRequest()?.headers['x-vault-namespace']).toBe('team-a');
    const outside = createSecretManagerClient(
      'hashicorp_vault',
      { ...config, vault_namespace: undefined } as never,
      environment(),
    );
    expect((await failure(outside.read({ path: 'shared/anthropic' }))).reason).toBe('not_found');
  });

  it('a wrong token is refused with 403, a missing path is not found, a missing key is named', async () => {
    const wrong = createSecretManagerClient(
      'hashicorp_vault',
      { ...tokenConfig(), vault_token: 'hvs.wrong' } as never,
      environment(),
    );
    const denied = await failure(wrong.read({ path: 'llm/openai', key: 'api_key' }));
    expect(denied.reason).toBe('forbidden');
    expect(denied.upstreamStatus).toBe(403);
    expect(denied.message).toContain('permission denied');
    expect(denied.message).not.toContain('hvs.wrong');

    const client = createSecretManagerClient('hashicorp_vault', tokenConfig() as never, environment());
    const missing = await failure(client.read({ path: 'llm/nothing-here', key: 'api_key' }));
    expect(missing.reason).toBe('not_found');
    expect(missing.message).toContain("'secret/llm/nothing-here'");
    const noKey = await failure(client.read({ path: 'llm/openai', key: 'api_secret' }));
    expect(noKey.reason).toBe('key_not_found');
    expect(noKey.message).toContain("no key 'api_secret'");
  });

  it('logs in with AppRole once and reuses the token until its lease runs out', async () => {
    const config = validateSecretAuthConfig('hashicorp_vault', {
      vault_auth_type: 'approle',
      vault_addr: vault.url,
      vault_role_id: ROLE_ID,
      vault_secret_id: SECRET_ID,
    });
    const client = createSecretManagerClient('hashicorp_vault', config as never, environment());
    const reads = await Promise.all([1, 2, 3].map(() => client.read({ path: 'llm/openai', key: 'api_key' })));
    expect(reads).toEqual(['sk-vault-openai-2', 'sk-vault-openai-2', 'sk-vault-openai-2']);
    expect(vault.logins).toBe(1);
    const login = vault.server.requestsTo(/\/login$/)[0];
    expect(login.path).toBe('/v1/auth/approle/login');
    expect(login.body).toEqual({ role_id: ROLE_ID, secret_id: SECRET_ID });
    const issued = vault.server.lastRequest(/\/data\//)?.headers['x-vault-token'] as string;
    expect(issued).toMatch(/^hvs\./);

    // A revoked token: the client logs in again once and the read still succeeds.
    vault.revoke(issued);
    await expect(client.read({ path: 'llm/openai', key: 'org' })).resolves.toBe('org-1');
    expect(vault.logins).toBe(2);
  });

  it('a wrong AppRole secret_id fails the login with a clear reason', async () => {
    const client = createSecretManagerClient(
      'hashicorp_vault',
      {
        vault_auth_type: 'approle',
        vault_addr: vault.url,
        vault_role_id: ROLE_ID,
        vault_secret_id: 'nope',
      } as never,
      environment(),
    );
    const error = await failure(client.read({ path: 'llm/openai', key: 'api_key' }));
    expect(error.reason).toBe('unauthenticated');
    expect(error.message).toContain(
      'AppRole login at auth/approle failed with HTTP 400: invalid role or secret ID',
    );
    expect(vault.reads).toBe(0);
  });

  it('logs in with Kubernetes auth using the service account token file', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'eyJhbGciOiJSUzI1NiJ9.k8s-service-account.sig\n');
    const client = createSecretManagerClient(
      'hashicorp_vault',
      { vault_auth_type: 'kubernetes', vault_addr: vault.url, vault_role: 'gateway' } as never,
      environment({ VAULT_KUBERNETES_TOKEN_PATH: tokenFile }),
    );
    await expect(client.read({ path: 'llm/openai', key: 'api_key' })).resolves.toBe('sk-vault-openai-2');
    expect(vault.server.requestsTo(/\/login$/)[0].body).toEqual({
      role: 'gateway',
      jwt: 'eyJhbGciOiJSUzI1NiJ9.k8s-service-account.sig',
    });
  });

  it('a Vault that cannot be reached is reported as unreachable, naming its address', async () => {
    const down = await closedPortUrl();
    const client = createSecretManagerClient(
      'hashicorp_vault',
      { vault_auth_type: 'token', vault_addr: down, vault_token: VAULT_TOKEN } as never,
      environment(),
    );
    const error = await failure(client.read({ path: 'llm/openai', key: 'api_key' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(down);
    expect(error.message).toContain('ECONNREFUSED');
  });
});

const AWS_KEY = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const ROLE_ARN = 'arn:aws:iam::123456789012:role/gateway-secrets';

describeOnce('secret managers: AWS Secrets Manager [sqlite]', () => {
  let aws: AwsSecretsMock;

  beforeAll(async () => {
    aws = await startAwsSecretsMock({
      region: 'eu-west-1',
      keys: [AWS_KEY],
      roles: { [ROLE_ARN]: { externalId: 'ext-1234' } },
      instanceRole: 'gateway-instance',
    });
    aws.putSecret('prod/openai', { string: JSON.stringify({ api_key: 'sk-aws-old' }) });
    aws.putSecret('prod/openai', { string: JSON.stringify({ api_key: 'sk-aws-new', org: 'org-9' }) });
    aws.putSecret('prod/plain', { string: 'sk-plain-value' });
    aws.putSecret('prod/binary', { binary: Buffer.from('binary-secret') });
  });
  afterAll(() => aws.close());
  beforeEach(() => aws.server.reset());

  const accessKeyConfig = (overrides: Record<string, string> = {}) =>
    validateSecretAuthConfig('aws_sm', {
      aws_auth_type: 'accessKey',
      aws_access_key_id: AWS_KEY.accessKeyId,
      aws_secret_access_key: AWS_KEY.secretAccessKey,
      aws_region: 'eu-west-1',
      aws_endpoint: aws.url,
      ...overrides,
    });

  it('signs GetSecretValue with SigV4 for secretsmanager in the region and picks a JSON key', async () => {
    const client = createSecretManagerClient('aws_sm', accessKeyConfig() as never, environment());
    await expect(client.read({ path: 'prod/openai', key: 'api_key' })).resolves.toBe('sk-aws-new');
    const request = aws.server.lastRequest()!;
    expect(request.headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
    expect(request.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(String(request.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
    );
    expect(request.body).toEqual({ SecretId: 'prod/openai' });
  });

  it('answers a plain SecretString as is, a binary one decoded, by name, ARN or staging label', async () => {
    const client = createSecretManagerClient('aws_sm', accessKeyConfig() as never, environment());
    await expect(client.read({ path: 'prod/plain' })).resolves.toBe('sk-plain-value');
    await expect(client.read({ path: 'prod/binary' })).resolves.toBe('binary-secret');
    await expect(client.read({ path: aws.arnOf('prod/plain')! })).resolves.toBe('sk-plain-value');
    await expect(client.read({ path: 'prod/openai', key: 'api_key', version: 'AWSPREVIOUS' })).resolves.toBe(
      'sk-aws-old',
    );
    expect(aws.server.lastRequest()?.body).toEqual({ SecretId: 'prod/openai', VersionStage: 'AWSPREVIOUS' });
    const plainKey = await failure(client.read({ path: 'prod/plain', key: 'api_key' }));
    expect(plainKey.reason).toBe('key_not_found');
    expect(plainKey.message).toContain('is not a JSON object');
  });

  it('a missing secret is ResourceNotFoundException', async () => {
    const client = createSecretManagerClient('aws_sm', accessKeyConfig() as never, environment());
    const error = await failure(client.read({ path: 'prod/none' }));
    expect(error.reason).toBe('not_found');
    expect(error.message).toContain('ResourceNotFoundException');
    expect(error.message).toContain("Secrets Manager can't find the specified secret.");
  });

  it('a wrong secret key fails the signature; an unknown key id is unrecognised; a wrong region is refused', async () => {
    const wrongSecret = createSecretManagerClient(
      'aws_sm',
      accessKeyConfig({ aws_secret_access_key: 'x'.repeat(40) }) as never,
      environment(),
    );
    const signature = await failure(wrongSecret.read({ path: 'prod/plain' }));
    expect(signature.reason).toBe('unauthenticated');
    expect(signature.message).toContain('InvalidSignatureException');
    expect(signature.message).not.toContain('x'.repeat(40));

    const unknown = createSecretManagerClient(
      'aws_sm',
      accessKeyConfig({ aws_access_key_id: 'AKIAUNKNOWNKEY000000' }) as never,
      environment(),
    );
    expect((await failure(unknown.read({ path: 'prod/plain' }))).message).toContain(
      'UnrecognizedClientException',
    );

    const region = createSecretManagerClient(
      'aws_sm',
      accessKeyConfig({ aws_region: 'us-east-2' }) as never,
      environment(),
    );
    const regionError = await failure(region.read({ path: 'prod/plain' }));
    expect(regionError.message).toContain("not 'us-east-2'");
  });

  it('assumes a role through STS once, with the external id, and reads with the session credentials', async () => {
    const config = validateSecretAuthConfig('aws_sm', {
      aws_auth_type: 'assumedRole',
      aws_role_arn: ROLE_ARN,
      aws_external_id: 'ext-1234',
      aws_region: 'eu-west-1',
      aws_access_key_id: AWS_KEY.accessKeyId,
      aws_secret_access_key: AWS_KEY.secretAccessKey,
      aws_endpoint: aws.url,
      aws_sts_endpoint: aws.url,
    });
    const client = createSecretManagerClient('aws_sm', config as never, environment());
    await expect(client.read({ path: 'prod/openai', key: 'org' })).resolves.toBe('org-9');
    await expect(client.read({ path: 'prod/plain' })).resolves.toBe('sk-plain-value');
    expect(aws.assumeRoleCalls).toBe(1);
    const read = aws.server.lastRequest()!;
    expect(String(read.headers.authorization)).toMatch(/Credential=ASIA[0-9A-F]+\//);
    expect(read.headers['x-amz-security-token']).toBeDefined();
    const sts = aws.server.requestsTo((r) => (r.body as Record<string, string>)?.Action === 'AssumeRole')[0];
    expect(String(sts.headers.authorization)).toContain('/eu-west-1/sts/aws4_request');

    const wrongExternal = createSecretManagerClient(
      'aws_sm',
      { ...config, aws_external_id: 'other' } as never,
      environment(),
    );
    const error = await failure(wrongExternal.read({ path: 'prod/plain' }));
    expect(error.reason).toBe('unauthenticated');
    expect(error.message).toContain(`STS refused to assume role ${ROLE_ARN}: AccessDenied`);
  });

  it('serviceRole uses the gateway environment keys, or instance metadata when there are none', async () => {
    const fromEnv = createSecretManagerClient(
      'aws_sm',
      { aws_auth_type: 'serviceRole', aws_endpoint: aws.url } as never,
      environment({
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: AWS_KEY.accessKeyId,
        AWS_SECRET_ACCESS_KEY: AWS_KEY.secretAccessKey,
      }),
    );
    await expect(fromEnv.read({ path: 'prod/plain' })).resolves.toBe('sk-plain-value');

    const fromInstance = createSecretManagerClient(
      'aws_sm',
      { aws_auth_type: 'serviceRole', aws_region: 'eu-west-1', aws_endpoint: aws.url } as never,
      environment({ AWS_EC2_METADATA_SERVICE_ENDPOINT: aws.url }),
    );
    await expect(fromInstance.read({ path: 'prod/openai', key: 'api_key' })).resolves.toBe('sk-aws-new');
    expect(aws.server.requestsTo('/latest/api/token')).toHaveLength(1);
  });

  it('an endpoint that cannot be reached is unreachable', async () => {
    const down = await closedPortUrl();
    const client = createSecretManagerClient(
      'aws_sm',
      accessKeyConfig({ aws_endpoint: down }) as never,
      environment(),
    );
    const error = await failure(client.read({ path: 'prod/plain' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(down);
  });
});

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const CLIENT_SECRET = 'azure~client~secret~value~0123456789';

describeOnce('secret managers: Azure Key Vault [sqlite]', () => {
  let azure: AzureKeyVaultMock;
  let versionOne: string;

  beforeAll(async () => {
    azure = await startAzureKeyVaultMock({
      tenantId: TENANT,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      managedIdentity: {},
    });
    versionOne = azure.setSecret('openai-key', 'sk-azure-1');
    azure.setSecret('openai-key', 'sk-azure-2');
    azure.setSecret('bundle', JSON.stringify({ api_key: 'sk-bundle', region: 'westeurope' }));
  });
  afterAll(() => azure.close());
  beforeEach(() => azure.server.reset());

  const entraConfig = (overrides: Record<string, string> = {}) =>
    validateSecretAuthConfig('azure_kv', {
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: TENANT,
      azure_entra_client_id: CLIENT_ID,
      azure_entra_client_secret: CLIENT_SECRET,
      azure_vault_url: azure.url,
      azure_authority_host: azure.url,
      ...overrides,
    });

  it('gets a token by client credentials once, then reads secrets with it', async () => {
    const client = createSecretManagerClient('azure_kv', entraConfig() as never, environment());
    await expect(client.read({ path: 'openai-key' })).resolves.toBe('sk-azure-2');
    await expect(client.read({ path: `openai-key/${versionOne}` })).resolves.toBe('sk-azure-1');
    await expect(client.read({ path: 'bundle', key: 'api_key' })).resolves.toBe('sk-bundle');
    expect(azure.tokenRequests).toBe(1);
    const token = azure.server.requestsTo(/token$/)[0];
    expect(token.path).toBe(`/${TENANT}/oauth2/v2.0/token`);
    expect(token.body).toMatchObject({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      scope: 'https://vault.azure.net/.default',
    });
    const read = azure.server.lastRequest(/^\/secrets\//)!;
    expect(read.query['api-version']).toBe('7.4');
    expect(String(read.headers.authorization)).toMatch(/^Bearer /);
  });

  it('the vault answers 401 without a bearer token', async () => {
    const response = await fetch(`${azure.url}/secrets/openai-key?api-version=7.4`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('Bearer authorization=');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('Unauthorized');
  });

  it('a wrong client secret is refused by Entra ID, naming the client and tenant but not the secret', async () => {
    const client = createSecretManagerClient(
      'azure_kv',
      entraConfig({ azure_entra_client_secret: 'wrong-secret-value' }) as never,
      environment(),
    );
    const error = await failure(client.read({ path: 'openai-key' }));
    expect(error.reason).toBe('unauthenticated');
    expect(error.message).toContain('AADSTS7000215');
    expect(error.message).toContain(CLIENT_ID);
    expect(error.message).not.toContain('wrong-secret-value');
    expect(azure.reads).toBe(0);
  });

  it('a missing secret is SecretNotFound; a revoked token is replaced once', async () => {
    const client = createSecretManagerClient('azure_kv', entraConfig() as never, environment());
    const missing = await failure(client.read({ path: 'nothing-here' }));
    expect(missing.reason).toBe('not_found');
    expect(missing.message).toContain('SecretNotFound');
    azure.tokens.clear();
    await expect(client.read({ path: 'openai-key' })).resolves.toBe('sk-azure-2');
    expect(azure.tokenRequests).toBe(2);
  });

  it('managed identity takes its token from the metadata endpoint', async () => {
    const client = createSecretManagerClient(
      'azure_kv',
      { azure_auth_mode: 'managed', azure_vault_url: azure.url } as never,
      environment({ AZURE_IMDS_ENDPOINT: `${azure.url}/metadata/identity/oauth2/token` }),
    );
    await expect(client.read({ path: 'openai-key' })).resolves.toBe('sk-azure-2');
    expect(azure.server.requestsTo('/metadata/identity/oauth2/token')[0].headers.metadata).toBe('true');
  });

  it('a vault that cannot be reached is unreachable', async () => {
    const down = await closedPortUrl();
    const client = createSecretManagerClient(
      'azure_kv',
      entraConfig({ azure_vault_url: down }) as never,
      environment(),
    );
    const error = await failure(client.read({ path: 'openai-key' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toContain(down);
  });
});

describeOnce('SecretResolver against the mocks [sqlite]', () => {
  let vault: VaultMock;
  let aws: AwsSecretsMock;
  let azure: AzureKeyVaultMock;

  beforeAll(async () => {
    vault = await startVaultMock({ tokens: [VAULT_TOKEN] });
    aws = await startAwsSecretsMock({ region: 'us-east-1', keys: [AWS_KEY] });
    azure = await startAzureKeyVaultMock({
      tenantId: TENANT,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
  });
  afterAll(async () => {
    await Promise.all([vault.close(), aws.close(), azure.close()]);
  });
  beforeEach(() => {
    vault.put('app/key', { api_key: 'sk-first' });
    aws.putSecret('app/key', { string: JSON.stringify({ api_key: 'sk-first' }) });
    azure.setSecret('app-key', 'sk-first');
    vault.server.reset();
    aws.server.reset();
    azure.server.reset();
  });

  const references = (): {
    ref: SecretReferenceTarget;
    reads: () => number;
    rotate: (value: string) => void;
  }[] => [
    {
      ref: {
        id: 'sr-vault',
        name: 'vault-openai',
        managerType: 'hashicorp_vault',
        authConfig: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: VAULT_TOKEN },
        path: 'app/key',
        key: 'api_key',
      },
      reads: () => vault.reads,
      rotate: (value) => void vault.put('app/key', { api_key: value }),
    },
    {
      ref: {
        id: 'sr-aws',
        name: 'aws-openai',
        managerType: 'aws_sm',
        authConfig: {
          aws_auth_type: 'accessKey',
          aws_access_key_id: AWS_KEY.accessKeyId,
          aws_secret_access_key: AWS_KEY.secretAccessKey,
          aws_region: 'us-east-1',
          aws_endpoint: aws.url,
        },
        path: 'app/key',
        key: 'api_key',
      },
      reads: () => aws.reads,
      rotate: (value) => void aws.putSecret('app/key', { string: JSON.stringify({ api_key: value }) }),
    },
    {
      ref: {
        id: 'sr-azure',
        name: 'azure-openai',
        managerType: 'azure_kv',
        authConfig: {
          azure_auth_mode: 'entra',
          azure_entra_tenant_id: TENANT,
          azure_entra_client_id: CLIENT_ID,
          azure_entra_client_secret: CLIENT_SECRET,
          azure_vault_url: azure.url,
          azure_authority_host: azure.url,
        },
        path: 'app-key',
      },
      reads: () => azure.reads,
      rotate: (value) => void azure.setSecret('app-key', value),
    },
  ];

  it.each(['hashicorp_vault', 'aws_sm', 'azure_kv'])(
    '%s: a second resolve within the TTL is a cache hit, without a second upstream call',
    async (type) => {
      const { ref, reads } = references().find((r) => r.ref.managerType === type)!;
      const resolver = new SecretResolver({ ttlMs: 60_000 });
      await expect(resolver.resolve(ref)).resolves.toBe('sk-first');
      await expect(resolver.resolve(ref)).resolves.toBe('sk-first');
      expect(resolver.peek(ref.id)).toBe('sk-first');
      expect(reads()).toBe(1);
    },
  );

  it.each(['hashicorp_vault', 'aws_sm', 'azure_kv'])(
    '%s: after the TTL the value is read again and a rotated secret is picked up',
    async (type) => {
      const { ref, reads, rotate } = references().find((r) => r.ref.managerType === type)!;
      const resolver = new SecretResolver({ ttlMs: 150, refreshAheadMs: 0 });
      await expect(resolver.resolve(ref)).resolves.toBe('sk-first');
      rotate('sk-second');
      await expect(resolver.resolve(ref)).resolves.toBe('sk-first');
      await sleep(200);
      expect(resolver.peek(ref.id)).toBeUndefined();
      await expect(resolver.resolve(ref)).resolves.toBe('sk-second');
      expect(reads()).toBe(2);
    },
  );

  it('close to expiry a resolve answers the cached value at once and refreshes in the background', async () => {
    const { ref, reads, rotate } = references()[0];
    const resolver = new SecretResolver({ ttlMs: 1_000, refreshAheadMs: 900 });
    await resolver.resolve(ref);
    rotate('sk-second');
    await sleep(150);
    await expect(resolver.resolve(ref)).resolves.toBe('sk-first');
    await vault.server.waitForRequests(2);
    await sleep(50);
    await expect(resolver.resolve(ref)).resolves.toBe('sk-second');
    expect(reads()).toBe(2);
  });

  it('concurrent resolves of one reference share one upstream call', async () => {
    const { ref, reads } = references()[1];
    const resolver = new SecretResolver();
    const values = await Promise.all(Array.from({ length: 20 }, () => resolver.resolve(ref)));
    expect(new Set(values)).toEqual(new Set(['sk-first']));
    expect(reads()).toBe(1);
  });

  it('invalidate and a changed configuration both force a new read', async () => {
    const { ref, reads } = references()[0];
    const resolver = new SecretResolver();
    await resolver.resolve(ref);
    resolver.invalidate(ref.id);
    expect(resolver.peek(ref.id)).toBeUndefined();
    await resolver.resolve(ref);
    expect(reads()).toBe(2);
    vault.put('app/other', { api_key: 'sk-other' });
    await expect(resolver.resolve({ ...ref, path: 'app/other' })).resolves.toBe('sk-other');
    expect(reads()).toBe(3);
    // A mapping's key override is cached apart from the reference's own key.
    await expect(resolver.resolve(ref, { key: 'api_key' })).resolves.toBe('sk-first');
  });

  it('an unreachable manager gives a 502 naming the reference and the manager, never a credential', async () => {
    const down = await closedPortUrl();
    const resolver = new SecretResolver({ errorTtlMs: 0 });
    for (const { ref } of references()) {
      const config = { ...ref.authConfig };
      for (const field of ['vault_addr', 'aws_endpoint', 'azure_vault_url', 'azure_authority_host']) {
        if (field in config) config[field] = down;
      }
      const error = await appFailure(resolver.resolve({ ...ref, authConfig: config }));
      expect(error.status).toBe(502);
      expect(error.code).toBe('secret_reference_unavailable');
      expect(error.message).toContain(`'${ref.name}' (${ref.id})`);
      expect(error.message).toMatch(/HashiCorp Vault|AWS Secrets Manager|Azure Key Vault/);
      expect(error.message).toContain(down);
      for (const secret of [VAULT_TOKEN, AWS_KEY.secretAccessKey, CLIENT_SECRET, 'sk-first']) {
        expect(error.message).not.toContain(secret);
      }
      expect(error.toEnvelope().error.code).toBe('secret_reference_unavailable');
    }
  });

  it('a manager error keeps its reason in the message; a failure is remembered briefly', async () => {
    const { ref } = references()[0];
    const resolver = new SecretResolver({ errorTtlMs: 60_000 });
    const broken = { ...ref, authConfig: { ...ref.authConfig, vault_token: 'hvs.revoked' } };
    const error = await appFailure(resolver.resolve(broken));
    expect(error.message).toMatch(
      /^Secret reference 'vault-openai' \(sr-vault\) could not be read from HashiCorp Vault at http:\/\/127\.0\.0\.1:\d+: Vault denied reading/,
    );
    await expect(resolver.resolve(broken)).rejects.toBe(error);
    expect(vault.reads).toBe(1);
  });

  it('a failed background refresh keeps serving the cached value until it expires', async () => {
    const { ref } = references()[0];
    const resolver = new SecretResolver({ ttlMs: 400, refreshAheadMs: 350 });
    await resolver.resolve(ref);
    vault.server.setFault({ status: 503, message: 'Vault is sealed' });
    await sleep(100);
    await expect(resolver.resolve(ref)).resolves.toBe('sk-first');
    await sleep(350);
    const error = await appFailure(resolver.resolve(ref));
    expect(error.message).toContain('Vault is sealed');
    vault.server.setFault(undefined);
  });

  it('the cache is bounded', async () => {
    const resolver = new SecretResolver({ maxEntries: 2 });
    for (const { ref } of references()) await resolver.resolve(ref);
    expect(resolver.size).toBe(2);
    expect(resolver.peek('sr-vault')).toBeUndefined();
    expect(resolver.peek('sr-azure')).toBe('sk-first');
  });
});
