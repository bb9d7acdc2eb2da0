import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import {
  ProviderDirectory,
  ModelDirectory,
  checkModel,
  credentialsForModel,
  pricingFor,
} from '../../libs/integrations/src';
import type { DirectoryLookup, ResolvedProvider } from '../../libs/integrations/src';
import { computeCost } from '../../libs/integrations/src/catalog';
import { TestApp, currentDialect, describeE2E, startTestApp } from '../support/test-app';

/** A tiny HTTP server for a manager or token endpoint; `handle` answers, `calls` records paths. */
async function httpStub(handle: (request: IncomingMessage, body: string, response: ServerResponse) => void) {
  const calls: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      calls.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      handle(request, body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function json(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function resolved(lookup: DirectoryLookup): ResolvedProvider {
  expect(lookup).not.toBeNull();
  expect(lookup).not.toBeInstanceOf(Promise);
  if (!lookup || lookup.refused)
    throw new Error(`expected a resolved provider, got ${JSON.stringify(lookup)}`);
  return lookup;
}

const OPENAI_KEY = 'sk-live-integration-key-0123456789abcdef';
const ROTATED_KEY = 'sk-live-rotated-key-fedcba9876543210';
const VK_KEY = 'sk-ant-virtual-key-secret-55443322110099';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const VAULT_TOKEN = 'hvs.vault-token-that-must-stay-sealed-42';
const VAULT_SECRET_VALUE = 'sk-from-vault-aaaaaaaaaaaaaaaaaaaaaaaa';
const ENTRA_SECRET = 'entra-client-secret-value-0987654321';
const { privateKey: SA_PRIVATE_KEY } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
/** A line of the PEM body: if it is anywhere in the database, the private key is. */
const SA_KEY_FRAGMENT = SA_PRIVATE_KEY.split('\n')[5];

describeE2E('integrations, providers, virtual keys, secret references, pricing', () => {
  let t: TestApp;
  let directory: ProviderDirectory;
  let models: ModelDirectory;
  let defaultWorkspace: string;
  let otherWorkspace: string;
  let workspaceKey: string;
  let otherKey: string;
  let vault: Awaited<ReturnType<typeof httpStub>>;
  let vaultUp = true;
  let google: Awaited<ReturnType<typeof httpStub>>;

  beforeAll(async () => {
    vault = await httpStub((request, _body, response) => {
      if (!vaultUp) return json(response, 503, { errors: ['Vault is sealed'] });
      if (request.headers['x-vault-token'] !== VAULT_TOKEN)
        return json(response, 403, { errors: ['permission denied'] });
      if (request.url === '/v1/secret/data/team/openai') {
        return json(response, 200, {
          data: { data: { api_key: VAULT_SECRET_VALUE }, metadata: { version: 1 } },
        });
      }
      return json(response, 404, { errors: [] });
    });
    google = await httpStub((_request, body, response) => {
      const form = new URLSearchParams(body);
      if (
        form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' ||
        !form.get('assertion')
      ) {
        return json(response, 400, { error: 'invalid_grant' });
      }
      json(response, 200, {
        access_token: `ya29.minted-${google.calls.length}`,
        expires_in: 3600,
        token_type: 'Bearer',
      });
    });
    t = await startTestApp();
    directory = t.app.get(ProviderDirectory);
    models = t.app.get(ModelDirectory);
    defaultWorkspace = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
    otherWorkspace = (
      await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Other', slug: 'other' } })
    ).body.id;
    const scopes = [
      'providers.create',
      'providers.list',
      'providers.read',
      'providers.update',
      'providers.delete',
      'virtual_keys.create',
      'virtual_keys.list',
      'virtual_keys.read',
      'virtual_keys.update',
      'virtual_keys.delete',
      'integrations.list',
      'integrations.read',
      'secret_references.list',
      'secret_references.read',
      'model_pricing.read',
    ];
    workspaceKey = (
      await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: 'w', workspace_id: 'default', scopes },
      })
    ).body.key;
    otherKey = (
      await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: 'o', workspace_id: 'other', scopes },
      })
    ).body.key;
  });

  afterAll(async () => {
    await t?.close();
    await vault?.close();
    await google?.close();
  });

  describe('integrations', () => {
    it('creates an integration, answering the key masked and never in the clear', async () => {
      const created = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'OpenAI production',
          slug: 'openai-prod',
          ai_provider_id: 'openai',
          key: OPENAI_KEY,
          description: 'main account',
          configurations: { openai_organization: 'org-123' },
          tags: { env: 'prod', team: 'core' },
        },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        object: 'integration',
        slug: 'openai-prod',
        ai_provider_id: 'openai',
        masked_key: 'sk-...cdef',
        configurations: { openai_organization: 'org-123' },
        tags: { env: 'prod', team: 'core' },
        allow_all_models: true,
      });
      const read = await t.request('GET', '/v1/integrations/openai-prod');
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain(OPENAI_KEY);
      const byId = await t.request('GET', `/v1/integrations/${created.body.id}`);
      expect(byId.body.slug).toBe('openai-prod');
    });

    it('refuses a taken slug, over-long names and slugs, unknown providers and a missing key', async () => {
      const taken = await t.request('POST', '/v1/integrations', {
        body: { name: 'dup', slug: 'openai-prod', ai_provider_id: 'openai', key: OPENAI_KEY },
      });
      expect(taken.status).toBe(409);
      expect(taken.body.error).toMatchObject({ code: 'slug_taken', param: 'slug' });
      const longName = await t.request('POST', '/v1/integrations', {
        body: { name: 'n'.repeat(256), ai_provider_id: 'openai', key: OPENAI_KEY },
      });
      expect(longName.status).toBe(400);
      expect(longName.body.error.param).toBe('name');
      const longSlug = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', slug: 's'.repeat(256), ai_provider_id: 'openai', key: OPENAI_KEY },
      });
      expect(longSlug.body.error.param).toBe('slug');
      const badSlug = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', slug: 'has space', ai_provider_id: 'openai', key: OPENAI_KEY },
      });
      expect(badSlug.status).toBe(400);
      expect(badSlug.body.error.param).toBe('slug');
      const unknown = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', ai_provider_id: 'not-a-provider', key: 'k' },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.param).toBe('ai_provider_id');
      const noKey = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', ai_provider_id: 'anthropic' },
      });
      expect(noKey.status).toBe(400);
      expect(noKey.body.error).toMatchObject({ param: 'key' });
      expect(noKey.body.error.message).toMatch(/rule: isDefined/);
      const unknownField = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', ai_provider_id: 'openai', key: 'k', configurations: { aws_region: 'us-east-1' } },
      });
      expect(unknownField.status).toBe(400);
      expect(unknownField.body.error.param).toBe('configurations.aws_region');
      const badTags = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', ai_provider_id: 'openai', key: 'k', tags: { env: 3 } },
      });
      expect(badTags.status).toBe(400);
      expect(badTags.body.error.param).toBe('tags');
    });

    it('validates Azure OpenAI: resource, deployments with api-version, Entra fields and scope', async () => {
      const base = { name: 'Azure', ai_provider_id: 'azure-openai', key: 'azure-key-1234567890' };
      const noResource = await t.request('POST', '/v1/integrations', {
        body: { ...base, configurations: { azure_deployment_config: [] } },
      });
      expect(noResource.status).toBe(400);
      expect(noResource.body.error.param).toBe('configurations.azure_deployment_config');
      const longVersion = await t.request('POST', '/v1/integrations', {
        body: {
          ...base,
          configurations: {
            azure_resource_name: 'contoso',
            azure_deployment_config: [
              {
                azure_api_version: 'x'.repeat(31),
                azure_deployment_name: 'gpt4o',
                azure_model_slug: 'gpt-4o',
              },
            ],
          },
        },
      });
      expect(longVersion.status).toBe(400);
      expect(longVersion.body.error.param).toBe(
        'configurations.azure_deployment_config[0].azure_api_version',
      );
      const entraMissing = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Azure entra',
          ai_provider_id: 'azure-openai',
          configurations: {
            azure_auth_mode: 'entra',
            azure_resource_name: 'contoso',
            azure_entra_tenant_id: 'tenant',
            azure_entra_client_id: 'client',
            azure_deployment_config: [
              { azure_api_version: '2024-10-21', azure_deployment_name: 'gpt4o', azure_model_slug: 'gpt-4o' },
            ],
          },
        },
      });
      expect(entraMissing.status).toBe(400);
      expect(entraMissing.body.error.param).toBe('configurations.azure_entra_client_secret');
      const created = await t.request('POST', '/v1/integrations', {
        body: {
          ...base,
          slug: 'azure-main',
          configurations: {
            azure_resource_name: 'contoso',
            azure_entra_scope: 'https://cognitiveservices.azure.com/.default',
            azure_deployment_config: [
              {
                azure_api_version: '2024-10-21',
                azure_deployment_name: 'gpt4o-prod',
                azure_model_slug: 'gpt-4o',
                is_default: true,
              },
              {
                azure_api_version: '2024-06-01',
                azure_deployment_name: 'mini',
                azure_model_slug: 'gpt-4o-mini',
                alias: 'small',
              },
            ],
          },
        },
      });
      expect(created.status).toBe(200);
      expect(created.body.configurations.azure_resource_name).toBe('contoso');
      expect(created.body.configurations.azure_deployment_config).toHaveLength(2);
    });

    it('validates Bedrock: region, access keys or an assumed role; secrets answered masked', async () => {
      const noRegion = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'b',
          ai_provider_id: 'bedrock',
          configurations: { aws_access_key_id: 'AKIA1', aws_secret_access_key: AWS_SECRET },
        },
      });
      expect(noRegion.body.error.param).toBe('configurations.aws_region');
      const noSecret = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'b',
          ai_provider_id: 'bedrock',
          configurations: { aws_region: 'us-east-1', aws_access_key_id: 'AKIA1' },
        },
      });
      expect(noSecret.body.error.param).toBe('configurations.aws_secret_access_key');
      const badArn = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'b',
          ai_provider_id: 'bedrock',
          configurations: { aws_auth_type: 'assumedRole', aws_region: 'us-east-1', aws_role_arn: 'role/x' },
        },
      });
      expect(badArn.body.error.param).toBe('configurations.aws_role_arn');
      expect(badArn.body.error.message).toMatch(/rule: isArn/);
      const role = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Bedrock role',
          ai_provider_id: 'bedrock',
          configurations: {
            aws_auth_type: 'assumedRole',
            aws_region: 'eu-west-1',
            aws_role_arn: 'arn:aws:iam::123456789012:role/gateway',
          },
        },
      });
      expect(role.status).toBe(200);
      const created = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Bedrock keys',
          slug: 'bedrock-keys',
          ai_provider_id: 'bedrock',
          configurations: {
            aws_region: 'us-east-1',
            aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
            aws_secret_access_key: AWS_SECRET,
          },
        },
      });
      expect(created.status).toBe(200);
      expect(created.body.configurations).toEqual({
        aws_region: 'us-east-1',
        masked_aws_access_key_id: 'AKI...MPLE',
        masked_aws_secret_access_key: 'wJa...EKEY',
      });
    });

    it('validates Vertex AI: region, project and a real service account key', async () => {
      const badKey = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'v',
          ai_provider_id: 'vertex-ai',
          configurations: {
            vertex_region: 'us-central1',
            vertex_service_account_json: {
              client_email: 'sa@p.iam.gserviceaccount.com',
              private_key: 'nope',
              project_id: 'p',
            },
          },
        },
      });
      expect(badKey.status).toBe(400);
      expect(badKey.body.error.param).toBe('configurations.vertex_service_account_json.private_key');
      const basicNoProject = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'v',
          ai_provider_id: 'vertex-ai',
          key: 'ya29.token',
          configurations: { vertex_region: 'us-central1' },
        },
      });
      expect(basicNoProject.body.error.param).toBe('configurations.vertex_project_id');
      const created = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Vertex SA',
          slug: 'vertex-sa',
          ai_provider_id: 'vertex-ai',
          configurations: {
            vertex_region: 'us-central1',
            vertex_service_account_json: {
              type: 'service_account',
              project_id: 'my-project',
              private_key_id: 'abcdef0123456789abcdef',
              private_key: SA_PRIVATE_KEY,
              client_email: 'gateway@my-project.iam.gserviceaccount.com',
              token_uri: `${google.url}/token`,
            },
          },
        },
      });
      expect(created.status).toBe(200);
      expect(created.body.configurations.masked_vertex_service_account_json).toEqual({
        type: 'service_account',
        project_id: 'my-project',
        client_email: 'gateway@my-project.iam.gserviceaccount.com',
        private_key_id: 'abc...cdef',
      });
      expect(JSON.stringify(created.body)).not.toContain('PRIVATE KEY');
    });

    it('accepts a self-hosted provider with a custom base URL and no key, and refuses a bad URL', async () => {
      const bad = await t.request('POST', '/v1/integrations', {
        body: { name: 'o', ai_provider_id: 'openai', configurations: { custom_host: 'ftp://x' } },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toBe('configurations.custom_host');
      const ollama = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Local llama',
          slug: 'local-llama',
          ai_provider_id: 'ollama',
          configurations: { custom_host: 'http://10.0.0.5:11434/v1/' },
        },
      });
      expect(ollama.status).toBe(200);
      expect(ollama.body.configurations.custom_host).toBe('http://10.0.0.5:11434/v1');
    });

    it('lists with tag and type filters', async () => {
      const tagged = await t.request('GET', `/v1/integrations?tags=${encodeURIComponent('{"env":"prod"}')}`);
      expect(tagged.status).toBe(200);
      expect(tagged.body.data.map((row: { slug: string }) => row.slug)).toEqual(['openai-prod']);
      const none = await t.request('GET', `/v1/integrations?tags=${encodeURIComponent('{"env":"dev"}')}`);
      expect(none.body).toMatchObject({ object: 'list', total: 0, data: [] });
      const badFilter = await t.request('GET', '/v1/integrations?tags=notjson');
      expect(badFilter.status).toBe(400);
      expect(badFilter.body.error.param).toBe('tags');
      const all = await t.request('GET', '/v1/integrations?page_size=2');
      expect(all.body.data).toHaveLength(2);
      expect(all.body.total).toBeGreaterThanOrEqual(6);
      const organisation = await t.request('GET', '/v1/integrations?type=workspace');
      expect(organisation.body.total).toBe(0);
    });

    it('updates: configurations merge, key rotation, tags; a workspace key cannot update', async () => {
      const updated = await t.request('PUT', '/v1/integrations/openai-prod', {
        body: { key: ROTATED_KEY, configurations: { openai_project: 'proj-1' }, tags: { env: 'prod' } },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        masked_key: 'sk-...3210',
        configurations: { openai_organization: 'org-123', openai_project: 'proj-1' },
        tags: { env: 'prod' },
      });
      const removed = await t.request('PUT', '/v1/integrations/openai-prod', {
        body: { configurations: { openai_project: null } },
      });
      expect(removed.body.configurations).toEqual({ openai_organization: 'org-123' });
      const forbidden = await t.request('PUT', '/v1/integrations/openai-prod', {
        key: workspaceKey,
        body: { name: 'x' },
      });
      expect(forbidden.status).toBe(403);
    });
  });

  describe('workspace access and default providers', () => {
    it('an empty workspace list needs the override flag', async () => {
      const refused = await t.request('PUT', '/v1/integrations/openai-prod/workspaces', {
        body: { workspaces: [] },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe('workspaces');
    });

    it('granting a workspace makes its default provider; the directory resolves it from memory', async () => {
      const granted = await t.request('PUT', '/v1/integrations/openai-prod/workspaces', {
        body: {
          workspaces: [
            { id: 'default', enabled: true, rate_limits: { type: 'requests', unit: 'rpm', value: 60 } },
          ],
        },
      });
      expect(granted.status).toBe(200);
      expect(granted.body.created_providers).toEqual([
        { workspace_id: defaultWorkspace, slug: 'openai-prod' },
      ]);
      expect(granted.body.workspaces).toEqual([
        {
          id: defaultWorkspace,
          enabled: true,
          usage_limits: null,
          rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
        },
      ]);
      const provider = resolved(
        directory.lookupProviderSlug(defaultWorkspace, 'openai-prod') as DirectoryLookup,
      );
      expect(provider).toMatchObject({
        providerName: 'openai',
        integrationSlug: 'openai-prod',
        credentials: { apiKey: ROTATED_KEY, openaiOrganization: 'org-123' },
        integrationLimits: { rateLimits: [{ type: 'requests', unit: 'rpm', value: 60 }] },
      });
      // Another workspace has no such provider.
      expect(directory.lookupProviderSlug(otherWorkspace, 'openai-prod')).toBeNull();
    });

    it('a taken default_provider_slug is refused, a free one is used, create_default_provider=false makes none', async () => {
      const taken = await t.request('PUT', '/v1/integrations/azure-main/workspaces', {
        body: { workspaces: [{ id: 'default', enabled: true }], default_provider_slug: 'openai-prod' },
      });
      expect(taken.status).toBe(409);
      expect(taken.body.error.param).toBe('default_provider_slug');
      const named = await t.request('PUT', '/v1/integrations/azure-main/workspaces', {
        body: { workspaces: [{ id: 'default', enabled: true, default_provider_slug: 'azure-eu' }] },
      });
      expect(named.body.created_providers).toEqual([{ workspace_id: defaultWorkspace, slug: 'azure-eu' }]);
      const none = await t.request('PUT', '/v1/integrations/bedrock-keys/workspaces', {
        body: { workspaces: [{ id: 'other', enabled: true }], create_default_provider: false },
      });
      expect(none.body.created_providers).toEqual([]);
      const listed = await t.request('GET', '/v1/providers?workspace_id=other');
      expect(listed.body.total).toBe(0);
    });

    it('Azure calls go to the deployment serving the model', () => {
      const azure = resolved(directory.lookupProviderSlug(defaultWorkspace, 'azure-eu') as DirectoryLookup);
      expect(azure.credentials).toMatchObject({
        apiKey: 'azure-key-1234567890',
        azureResourceName: 'contoso',
        azureDeploymentId: 'gpt4o-prod',
        azureApiVersion: '2024-10-21',
        azureEntraScope: 'https://cognitiveservices.azure.com/.default',
      });
      expect(credentialsForModel(azure, 'small')).toMatchObject({
        azureDeploymentId: 'mini',
        azureApiVersion: '2024-06-01',
      });
      expect(credentialsForModel(azure, 'gpt-4o-mini').azureDeploymentId).toBe('mini');
    });

    it('revoking with an empty list and the override flag refuses the provider as not granted', async () => {
      await t.request('PUT', '/v1/integrations/azure-main/workspaces', {
        body: { workspaces: [], override_existing_workspace_access: true },
      });
      const refused = directory.lookupProviderSlug(defaultWorkspace, 'azure-eu') as DirectoryLookup;
      expect(refused).toMatchObject({ refused: true, reason: 'integration_not_granted', status: 403 });
      const access = await t.request('GET', '/v1/integrations/azure-main/workspaces');
      expect(access.body).toMatchObject({ total: 0, workspaces: [] });
      // Granting again reuses the default provider instead of making a second one.
      const again = await t.request('PUT', '/v1/integrations/azure-main/workspaces', {
        body: { workspaces: [{ id: 'default', enabled: true }] },
      });
      expect(again.body.created_providers).toEqual([{ workspace_id: defaultWorkspace, slug: 'azure-eu' }]);
      expect(
        resolved(directory.lookupProviderSlug(defaultWorkspace, 'azure-eu') as DirectoryLookup).slug,
      ).toBe('azure-eu');
    });

    it('global access grants every workspace without a row, and makes their default providers', async () => {
      const global = await t.request('PUT', '/v1/integrations/local-llama/workspaces', {
        body: { global_workspace_access: { enabled: true } },
      });
      expect(global.status).toBe(200);
      const slugs = global.body.created_providers.map((p: { workspace_id: string }) => p.workspace_id).sort();
      expect(slugs).toEqual([defaultWorkspace, otherWorkspace].sort());
      const local = resolved(directory.lookupProviderSlug(otherWorkspace, 'local-llama') as DirectoryLookup);
      expect(local.credentials).toEqual({ customHost: 'http://10.0.0.5:11434/v1' });
      const detail = await t.request('GET', '/v1/integrations/local-llama');
      expect(detail.body.global_workspace_access_settings).toMatchObject({ enabled: true });
      // A workspace key of W sees the integration (granted through global access).
      const seen = await t.request('GET', '/v1/integrations/local-llama', { key: workspaceKey });
      expect(seen.status).toBe(200);
    });

    it('a workspace made after a global grant gets its default provider, unless the grant said not to', async () => {
      const quiet = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Quiet',
          slug: 'quiet-global',
          ai_provider_id: 'groq',
          key: 'gsk_quiet_key_abcdefghijk',
        },
      });
      expect(quiet.status).toBe(200);
      const noDefaults = await t.request('PUT', '/v1/integrations/quiet-global/workspaces', {
        body: { global_workspace_access: { enabled: true }, create_default_provider: false },
      });
      expect({ status: noDefaults.status, body: noDefaults.body }).toMatchObject({
        status: 200,
        body: { created_providers: [] },
      });

      const late = await t.request('POST', '/v1/admin/workspaces', {
        body: { name: 'Late', slug: 'late-ws' },
      });
      expect(late.status).toBe(200);
      // In memory at once: the directory reloaded after the workspace's transaction committed.
      // quiet-global grants the workspace too, but made no provider in it (the list below).
      const local = resolved(directory.lookupProviderSlug(late.body.id, 'local-llama') as DirectoryLookup);
      expect(local.credentials).toEqual({ customHost: 'http://10.0.0.5:11434/v1' });
      const listed = await t.request('GET', `/v1/providers?workspace_id=${late.body.id}`);
      expect(listed.status).toBe(200);
      expect(
        listed.body.data.map((p: { slug: string; is_default: boolean }) => [p.slug, p.is_default]),
      ).toEqual([['local-llama', true]]);
    });

    it('a workspace-scoped integration makes its default provider at creation', async () => {
      const scoped = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Team Groq',
          ai_provider_id: 'groq',
          key: 'gsk_team_key_abcdefghijklmnop',
          workspace_id: 'other',
          default_provider_slug: 'groq-team',
        },
      });
      expect(scoped.status).toBe(200);
      expect(scoped.body.default_provider).toMatchObject({ slug: 'groq-team', workspace_id: otherWorkspace });
      expect(
        resolved(directory.lookupProviderSlug(otherWorkspace, 'groq-team') as DirectoryLookup).providerName,
      ).toBe('groq');
      // Only that workspace sees it.
      expect(
        (await t.request('GET', `/v1/integrations/${scoped.body.slug}`, { key: workspaceKey })).status,
      ).toBe(404);
      expect((await t.request('GET', `/v1/integrations/${scoped.body.slug}`, { key: otherKey })).status).toBe(
        200,
      );
      const orgOnly = await t.request('POST', '/v1/integrations', {
        body: { name: 'x', ai_provider_id: 'groq', key: 'k', default_provider_slug: 'nope' },
      });
      expect(orgOnly.status).toBe(400);
      expect(orgOnly.body.error.param).toBe('default_provider_slug');
    });
  });

  describe('models', () => {
    it('restricts models, adds custom ones with their own pricing, and deletes them', async () => {
      const badPricing = await t.request('PUT', '/v1/integrations/openai-prod/models', {
        body: {
          models: [
            {
              slug: 'my-ft',
              enabled: true,
              is_custom: true,
              pricing_config: { pay_as_you_go: { request_token: { price: -1 } } },
            },
          ],
        },
      });
      expect(badPricing.status).toBe(400);
      expect(badPricing.body.error.param).toBe('models[0].pricing_config');
      const updated = await t.request('PUT', '/v1/integrations/openai-prod/models', {
        body: {
          allow_all_models: false,
          models: [
            { slug: 'gpt-4o', enabled: true },
            { slug: 'gpt-4o-mini', enabled: true },
            {
              slug: 'ft:gpt-4o-mini:acme:support',
              enabled: true,
              is_custom: true,
              is_finetune: true,
              base_model_slug: 'gpt-4o-mini',
              pricing_config: {
                type: 'static',
                pay_as_you_go: { request_token: { price: 0.0003 }, response_token: { price: 0.0012 } },
              },
            },
          ],
        },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.allow_all_models).toBe(false);
      const custom = updated.body.models.find(
        (m: { slug: string }) => m.slug === 'ft:gpt-4o-mini:acme:support',
      );
      expect(custom).toMatchObject({
        enabled: true,
        is_custom: true,
        is_finetune: true,
        base_model_slug: 'gpt-4o-mini',
      });
      const o3 = updated.body.models.find((m: { slug: string }) => m.slug === 'o3');
      expect(o3).toMatchObject({ enabled: false, is_custom: false });

      const provider = resolved(
        directory.lookupProviderSlug(defaultWorkspace, 'openai-prod') as DirectoryLookup,
      );
      expect(provider.allowedModels).toEqual(['ft:gpt-4o-mini:acme:support', 'gpt-4o', 'gpt-4o-mini']);
      expect(checkModel(provider, 'gpt-4o')).toBeNull();
      expect(checkModel(provider, 'o3')).toMatchObject({
        refused: true,
        reason: 'model_not_allowed',
        status: 403,
      });
      // 1000 × 0.0003 + 500 × 0.0012 = 0.9 cents
      const cost = computeCost(pricingFor(provider, 'ft:gpt-4o-mini:acme:support'), {
        promptTokens: 1000,
        completionTokens: 500,
      });
      expect(cost!.cents).toBeCloseTo(0.9, 9);

      const listed = models.listForWorkspace(defaultWorkspace);
      expect(listed.object).toBe('list');
      const ids = listed.data.map((model) => model.id);
      expect(ids).toEqual(expect.arrayContaining(['gpt-4o', 'gpt-4o-mini', 'ft:gpt-4o-mini:acme:support']));
      // openai-prod now allows three models; other providers of the workspace (Azure) add their own.
      const fromOpenAi = listed.data.filter((model) => model.owned_by === 'openai').map((model) => model.id);
      // (A model two providers serve is listed once, under the first.)
      expect(fromOpenAi).toContain('ft:gpt-4o-mini:acme:support');
      for (const id of fromOpenAi)
        expect(['ft:gpt-4o-mini:acme:support', 'gpt-4o', 'gpt-4o-mini']).toContain(id);
      expect(listed.data.find((model) => model.id === 'gpt-4o')).toMatchObject({ object: 'model' });
      expect(models.findForWorkspace(otherWorkspace, 'gpt-4o')).toBeNull();
      expect(typeof listed.data[0].created).toBe('number');

      const missing = await t.request(
        'DELETE',
        '/v1/integrations/openai-prod/models?slugs=ft:gpt-4o-mini:acme:support,nope',
      );
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toContain("'nope'");
      const deleted = await t.request(
        'DELETE',
        '/v1/integrations/openai-prod/models?slugs=ft:gpt-4o-mini:acme:support',
      );
      expect(deleted.status).toBe(200);
      expect(
        checkModel(
          resolved(directory.lookupProviderSlug(defaultWorkspace, 'openai-prod') as DirectoryLookup),
          'ft:gpt-4o-mini:acme:support',
        ),
      ).toMatchObject({ reason: 'model_not_allowed' });
      expect(models.findForWorkspace(defaultWorkspace, 'ft:gpt-4o-mini:acme:support')).toBeNull();
    });

    it('pricing adjustments change the cost the gateway computes and what the pricing route answers', async () => {
      const adjusted = await t.request('PUT', '/v1/integrations/openai-prod', {
        body: { pricing_adjustments: { multiplier: { default: 0.8, cache_read_input_token: 0.5 } } },
      });
      expect(adjusted.status).toBe(200);
      const negative = await t.request('PUT', '/v1/integrations/openai-prod', {
        body: { pricing_adjustments: { multiplier: { default: -1 } } },
      });
      expect(negative.status).toBe(400);
      expect(negative.body.error.param).toBe('pricing_adjustments.multiplier.default');
      const provider = resolved(
        directory.lookupProviderSlug(defaultWorkspace, 'openai-prod') as DirectoryLookup,
      );
      // gpt-4o: 600 × 0.00025 × 0.8 + 400 × 0.000125 × 0.5 + 500 × 0.001 × 0.8 = 0.12 + 0.025 + 0.4
      const cost = computeCost(pricingFor(provider, 'gpt-4o'), {
        promptTokens: 1000,
        cachedReadTokens: 400,
        completionTokens: 500,
      });
      expect(cost!.cents).toBeCloseTo(0.545, 9);

      const catalog = await t.request('GET', '/v1/model-configs/pricing/openai/gpt-4o');
      expect(catalog.status).toBe(200);
      expect(catalog.body).toMatchObject({
        pay_as_you_go: { request_token: { price: 0.00025 }, response_token: { price: 0.001 } },
        currency: 'USD',
        source: 'catalog',
        adjusted: false,
      });
      expect(catalog.body.modes.batch.pay_as_you_go.request_token.price).toBeCloseTo(0.000125, 12);
      const withIntegration = await t.request(
        'GET',
        '/v1/model-configs/pricing/openai/gpt-4o?integration=openai-prod',
      );
      expect(withIntegration.body.adjusted).toBe(true);
      expect(withIntegration.body.pay_as_you_go.request_token.price).toBeCloseTo(0.0002, 12);
      expect(withIntegration.body.pay_as_you_go.cache_read_input_token.price).toBeCloseTo(0.0000625, 12);
      const viaProvider = await t.request(
        'GET',
        '/v1/model-configs/pricing/openai/gpt-4o?provider_slug=openai-prod',
        { key: workspaceKey },
      );
      expect(viaProvider.body.pay_as_you_go.request_token.price).toBeCloseTo(0.0002, 12);
      const otherProvider = await t.request(
        'GET',
        '/v1/model-configs/pricing/anthropic/claude-sonnet-4-20250514?integration=openai-prod',
      );
      expect(otherProvider.status).toBe(400);
      expect(otherProvider.body.error.param).toBe('provider');
      const unknown = await t.request('GET', '/v1/model-configs/pricing/openai/not-a-model');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('model_not_found');
      const slashed = await t.request(
        'GET',
        '/v1/model-configs/pricing/bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0',
      );
      expect(slashed.status).toBe(200);
      expect(slashed.body.pay_as_you_go.request_token.price).toBeGreaterThan(0);
    });
  });

  describe('providers', () => {
    it('creates a provider in the caller workspace from a granted integration', async () => {
      const created = await t.request('POST', '/v1/providers', {
        key: workspaceKey,
        body: {
          name: 'Support bot',
          integration_id: 'openai-prod',
          slug: 'support',
          note: 'for the support team',
          usage_limits: { credit_limit: 100, type: 'cost', periodic_reset: 'monthly' },
          rate_limits: { type: 'requests', unit: 'rpm', value: 20 },
          tags: { team: 'support' },
        },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        object: 'provider',
        slug: 'support',
        integration_id: 'openai-prod',
        workspace_id: defaultWorkspace,
        status: 'active',
        usage_limits: { credit_limit: 100, type: 'cost', periodic_reset: 'monthly' },
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 20 }],
      });
      const support = resolved(directory.lookupProviderSlug(defaultWorkspace, 'support') as DirectoryLookup);
      expect(support).toMatchObject({
        kind: 'provider',
        credentials: { apiKey: ROTATED_KEY },
        usageLimits: { credit_limit: 100 },
        rateLimits: [{ type: 'requests', unit: 'rpm', value: 20 }],
        expiresAt: null,
      });
    });

    it('refuses bad limits, a past expiry, a taken slug, a missing workspace and ungranted integrations', async () => {
      const limits = await t.request('POST', '/v1/providers', {
        key: workspaceKey,
        body: {
          name: 'x',
          integration_id: 'openai-prod',
          usage_limits: { credit_limit: 10, periodic_reset: 'weekly', periodic_reset_days: 7 },
        },
      });
      expect(limits.status).toBe(400);
      expect(limits.body.error.param).toBe('usage_limits.periodic_reset_days');
      const rate = await t.request('POST', '/v1/providers', {
        key: workspaceKey,
        body: {
          name: 'x',
          integration_id: 'openai-prod',
          rate_limits: [{ type: 'requests', unit: 'rps', value: 1 }],
        },
      });
      expect(rate.status).toBe(400);
      expect(rate.body.error.param).toBe('rate_limits[0].unit');
      const past = await t.request('POST', '/v1/providers', {
        key: workspaceKey,
        body: { name: 'x', integration_id: 'openai-prod', expires_at: '2020-01-01T00:00:00Z' },
      });
      expect(past.body.error.param).toBe('expires_at');
      const taken = await t.request('POST', '/v1/providers', {
        key: workspaceKey,
        body: { name: 'x', integration_id: 'openai-prod', slug: 'support' },
      });
      expect(taken.status).toBe(409);
      const noWorkspace = await t.request('POST', '/v1/providers', {
        body: { name: 'x', integration_id: 'openai-prod' },
      });
      expect(noWorkspace.status).toBe(400);
      expect(noWorkspace.body.error.param).toBe('workspace_id');
      // Not granted to W2: the admin is told so, W2's key cannot even see it.
      const notGranted = await t.request('POST', '/v1/providers', {
        body: { name: 'x', integration_id: 'openai-prod', workspace_id: 'other' },
      });
      expect(notGranted.status).toBe(403);
      expect(notGranted.body.error.code).toBe('integration_not_granted');
      const hidden = await t.request('POST', '/v1/providers', {
        key: otherKey,
        body: { name: 'x', integration_id: 'openai-prod' },
      });
      expect(hidden.status).toBe(404);
      expect(hidden.body.error.param).toBe('integration_id');
    });

    it('a workspace principal of another workspace gets 404 for the provider', async () => {
      expect((await t.request('GET', '/v1/providers/support', { key: otherKey })).status).toBe(404);
      expect(
        (await t.request('PUT', '/v1/providers/support', { key: otherKey, body: { note: 'x' } })).status,
      ).toBe(404);
      expect((await t.request('DELETE', '/v1/providers/support', { key: otherKey })).status).toBe(404);
      expect(
        (await t.request('GET', `/v1/providers/support?workspace_id=${defaultWorkspace}`, { key: otherKey }))
          .status,
      ).toBe(404);
      const listed = await t.request('GET', '/v1/providers', { key: otherKey });
      expect(
        listed.body.data.every((row: { workspace_id: string }) => row.workspace_id === otherWorkspace),
      ).toBe(true);
      // Organisation principals pass workspace_id, or rely on the slug being unique.
      expect((await t.request('GET', '/v1/providers/support?workspace_id=default')).body.slug).toBe(
        'support',
      );
      expect((await t.request('GET', '/v1/providers/support')).body.slug).toBe('support');
      const ambiguous = await t.request('GET', '/v1/providers/local-llama');
      expect(ambiguous.status).toBe(400);
      expect(ambiguous.body.error.param).toBe('workspace_id');
    });

    it('lists with tag filters', async () => {
      const listed = await t.request(
        'GET',
        `/v1/providers?workspace_id=default&tags=${encodeURIComponent('{"team":"support"}')}`,
      );
      expect(listed.body.data.map((row: { slug: string }) => row.slug)).toEqual(['support']);
      const byIntegration = await t.request('GET', '/v1/providers?integration_id=openai-prod');
      expect(byIntegration.body.data.map((row: { slug: string }) => row.slug).sort()).toEqual([
        'openai-prod',
        'support',
      ]);
    });

    it('updates are seen by the directory at once; disabling and deleting refuse or remove it', async () => {
      const updated = await t.request('PUT', '/v1/providers/support', {
        key: workspaceKey,
        body: { note: 'changed', rate_limits: [{ type: 'tokens', unit: 'rph', value: 1000 }] },
      });
      expect(updated.status).toBe(200);
      expect(
        resolved(directory.lookupProviderSlug(defaultWorkspace, 'support') as DirectoryLookup).rateLimits,
      ).toEqual([{ type: 'tokens', unit: 'rph', value: 1000 }]);
      await t.request('PUT', '/v1/providers/support', { key: workspaceKey, body: { status: 'disabled' } });
      expect(directory.lookupProviderSlug(defaultWorkspace, 'support')).toMatchObject({
        refused: true,
        reason: 'disabled',
      });
      await t.request('PUT', '/v1/providers/support', { key: workspaceKey, body: { status: 'active' } });
      // The integration's key rotation reaches its providers.
      await t.request('PUT', '/v1/integrations/openai-prod', { body: { key: OPENAI_KEY } });
      expect(
        resolved(directory.lookupProviderSlug(defaultWorkspace, 'support') as DirectoryLookup).credentials
          .apiKey,
      ).toBe(OPENAI_KEY);
      const deleted = await t.request('DELETE', '/v1/providers/support', { key: workspaceKey });
      expect(deleted.body).toMatchObject({ deleted: true, slug: 'support' });
      expect(directory.lookupProviderSlug(defaultWorkspace, 'support')).toBeNull();
    });

    it('an expiring provider is refused as expired once its time passes, without a reload', async () => {
      await t.request('POST', '/v1/providers', {
        key: workspaceKey,
        body: {
          name: 'short',
          slug: 'short-lived',
          integration_id: 'openai-prod',
          expires_at: new Date(Date.now() + 1200).toISOString(),
        },
      });
      const before = resolved(
        directory.lookupProviderSlug(defaultWorkspace, 'short-lived') as DirectoryLookup,
      );
      expect(before.expiresAt).toBeInstanceOf(Date);
      const generation = directory.generation;
      await sleep(1400);
      expect(directory.lookupProviderSlug(defaultWorkspace, 'short-lived')).toMatchObject({
        refused: true,
        reason: 'expired',
        status: 401,
      });
      expect(directory.generation).toBe(generation);
      expect((await t.request('GET', '/v1/providers/short-lived', { key: workspaceKey })).body.status).toBe(
        'expired',
      );
      const renewed = await t.request('PUT', '/v1/providers/short-lived', {
        key: workspaceKey,
        body: { expires_at: new Date(Date.now() + 3600_000).toISOString() },
      });
      expect(renewed.body.status).toBe('active');
      expect(
        resolved(directory.lookupProviderSlug(defaultWorkspace, 'short-lived') as DirectoryLookup).slug,
      ).toBe('short-lived');
    });
  });

  describe('virtual keys', () => {
    it('carries its own key and settings, answered masked in camelCase', async () => {
      const created = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'Claude VK',
          slug: 'claude-vk',
          provider: 'anthropic',
          key: VK_KEY,
          anthropicVersion: '2023-06-01',
          note: 'n',
        },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        object: 'virtual-key',
        slug: 'claude-vk',
        provider: 'anthropic',
        masked_key: 'sk-...0099',
        model_config: { anthropicVersion: '2023-06-01' },
        integration_id: null,
      });
      const lookup = resolved(directory.lookupVirtualKey(defaultWorkspace, 'claude-vk') as DirectoryLookup);
      expect(lookup).toMatchObject({
        kind: 'virtual_key',
        providerName: 'anthropic',
        integrationId: null,
        allowedModels: null,
      });
      expect(lookup.credentials).toEqual({ apiKey: VK_KEY, anthropicVersion: '2023-06-01' });
      const read = await t.request('GET', '/v1/virtual-keys/claude-vk', { key: workspaceKey });
      expect(JSON.stringify(read.body)).not.toContain(VK_KEY);
    });

    it('Bedrock and Azure virtual keys use the reference camelCase fields', async () => {
      const bedrock = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'Bedrock VK',
          slug: 'bedrock-vk',
          provider: 'bedrock',
          awsAccessKeyId: 'AKIAIOSFODNN7EXAMPLE',
          awsSecretAccessKey: AWS_SECRET,
          awsRegion: 'us-west-2',
        },
      });
      expect(bedrock.status).toBe(200);
      expect(bedrock.body.model_config).toEqual({
        awsRegion: 'us-west-2',
        masked_awsAccessKeyId: 'AKI...MPLE',
        masked_awsSecretAccessKey: 'wJa...EKEY',
      });
      expect(
        resolved(directory.lookupVirtualKey(defaultWorkspace, 'bedrock-vk') as DirectoryLookup).credentials,
      ).toEqual({
        awsAccessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        awsSecretAccessKey: AWS_SECRET,
        awsRegion: 'us-west-2',
      });
      const missingRegion = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: { name: 'b', provider: 'bedrock', awsAccessKeyId: 'AKIA', awsSecretAccessKey: 'x' },
      });
      expect(missingRegion.status).toBe(400);
      expect(missingRegion.body.error.param).toBe('awsRegion');
      const azure = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'Azure VK',
          slug: 'azure-vk',
          provider: 'azure-openai',
          key: 'azure-vk-key-0000000000',
          resourceName: 'fabrikam',
          deploymentConfig: [
            { apiVersion: '2024-10-21', deploymentName: 'prod-4o', alias: 'gpt-4o', is_default: true },
            { apiVersion: '2024-06-01', deploymentName: 'prod-mini', alias: 'mini' },
          ],
        },
      });
      expect(azure.status).toBe(200);
      const azureLookup = resolved(
        directory.lookupVirtualKey(defaultWorkspace, 'azure-vk') as DirectoryLookup,
      );
      expect(azureLookup.credentials).toMatchObject({
        azureResourceName: 'fabrikam',
        azureDeploymentId: 'prod-4o',
      });
      expect(credentialsForModel(azureLookup, 'mini').azureDeploymentId).toBe('prod-mini');
      const badDeployment = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'a',
          provider: 'azure-openai',
          key: 'k',
          resourceName: 'r',
          deploymentConfig: [{ apiVersion: 'v', deploymentName: 'd', colour: 'red' }],
        },
      });
      expect(badDeployment.body.error.param).toBe('deploymentConfig[0].colour');
    });

    it('may point at an integration instead, but not both', async () => {
      const both = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: { name: 'x', provider: 'openai', integration_id: 'openai-prod', key: 'k' },
      });
      expect(both.status).toBe(400);
      const own = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: { name: 'x', integration_id: 'openai-prod', key: 'k' },
      });
      expect(own.status).toBe(400);
      expect(own.body.error.param).toBe('key');
      const viaIntegration = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: { name: 'Via integration', slug: 'vk-openai', integration_id: 'openai-prod' },
      });
      expect(viaIntegration.status).toBe(200);
      expect(viaIntegration.body).toMatchObject({
        integration_id: 'openai-prod',
        provider: 'openai',
        model_config: {},
      });
      expect(
        resolved(directory.lookupVirtualKey(defaultWorkspace, 'vk-openai') as DirectoryLookup).credentials
          .apiKey,
      ).toBe(OPENAI_KEY);
    });

    it('updates merge settings and rotate the key; delete removes it from the directory', async () => {
      const updated = await t.request('PUT', '/v1/virtual-keys/bedrock-vk', {
        key: workspaceKey,
        body: { awsRegion: 'eu-central-1', note: 'moved' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.model_config.awsRegion).toBe('eu-central-1');
      const lookup = resolved(directory.lookupVirtualKey(defaultWorkspace, 'bedrock-vk') as DirectoryLookup);
      expect(lookup.credentials).toMatchObject({ awsRegion: 'eu-central-1', awsSecretAccessKey: AWS_SECRET });
      await t.request('PUT', '/v1/virtual-keys/claude-vk', {
        key: workspaceKey,
        body: { key: 'sk-ant-new-secret-000000000000' },
      });
      expect(
        resolved(directory.lookupVirtualKey(defaultWorkspace, 'claude-vk') as DirectoryLookup).credentials
          .apiKey,
      ).toBe('sk-ant-new-secret-000000000000');
      expect((await t.request('DELETE', '/v1/virtual-keys/claude-vk', { key: workspaceKey })).status).toBe(
        200,
      );
      expect(directory.lookupVirtualKey(defaultWorkspace, 'claude-vk')).toBeNull();
      expect((await t.request('GET', '/v1/virtual-keys/claude-vk', { key: workspaceKey })).status).toBe(404);
    });
  });

  describe('secret references and secret mappings', () => {
    let referenceId: string;

    it('creates a reference with its auth config sealed and answered masked', async () => {
      const invalid = await t.request('POST', '/v1/secret-references', {
        body: {
          name: 'v',
          manager_type: 'hashicorp_vault',
          auth_config: { vault_auth_type: 'token', vault_addr: vault.url },
          secret_path: 'x',
        },
      });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.param).toBe('auth_config.vault_token');
      const conflicting = await t.request('POST', '/v1/secret-references', {
        body: {
          name: 'v',
          manager_type: 'hashicorp_vault',
          auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: VAULT_TOKEN },
          secret_path: 'x',
          allow_all_workspaces: true,
          allowed_workspaces: ['default'],
        },
      });
      expect(conflicting.status).toBe(400);
      expect(conflicting.body.error.param).toBe('allowed_workspaces');
      const created = await t.request('POST', '/v1/secret-references', {
        body: {
          name: 'Team OpenAI key',
          slug: 'team-openai',
          manager_type: 'hashicorp_vault',
          auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: VAULT_TOKEN },
          secret_path: 'team/openai',
          secret_key: 'api_key',
          allowed_workspaces: ['default'],
          tags: { owner: 'platform' },
        },
      });
      expect(created.status).toBe(200);
      referenceId = created.body.id;
      expect(created.body).toMatchObject({
        object: 'secret-reference',
        slug: 'team-openai',
        manager_type: 'hashicorp_vault',
        allow_all_workspaces: false,
        allowed_workspaces: [defaultWorkspace],
        auth_config: { vault_auth_type: 'token', vault_addr: vault.url },
      });
      expect(created.body.auth_config.vault_token).not.toBe(VAULT_TOKEN);
      expect(JSON.stringify(created.body)).not.toContain(VAULT_TOKEN);
      const listed = await t.request('GET', '/v1/secret-references?manager_type=hashicorp_vault&search=team');
      expect(listed.body.data.map((row: { slug: string }) => row.slug)).toEqual(['team-openai']);
      expect(
        (await t.request('GET', '/v1/secret-references/team-openai', { key: workspaceKey })).status,
      ).toBe(200);
      expect((await t.request('GET', '/v1/secret-references/team-openai', { key: otherKey })).status).toBe(
        404,
      );
      expect((await t.request('GET', '/v1/secret-references', { key: otherKey })).body.total).toBe(0);
    });

    it('a virtual key mapped to the reference reads the key from Vault once, then from memory', async () => {
      const notAllowed = await t.request('POST', '/v1/virtual-keys', {
        key: otherKey,
        body: {
          name: 'x',
          provider: 'openai',
          secret_mappings: [{ target_field: 'key', secret_reference_id: 'team-openai' }],
        },
      });
      expect(notAllowed.status).toBe(403);
      expect(notAllowed.body.error.param).toBe('secret_mappings[0].secret_reference_id');
      const badTarget = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'x',
          provider: 'openai',
          secret_mappings: [{ target_field: 'model_config.awsRegion', secret_reference_id: 'team-openai' }],
        },
      });
      expect(badTarget.body.error.param).toBe('secret_mappings[0].target_field');
      const created = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'From vault',
          slug: 'vault-vk',
          provider: 'openai',
          secret_mappings: [{ target_field: 'key', secret_reference_id: 'team-openai' }],
        },
      });
      expect(created.status).toBe(200);
      expect(created.body.secret_mappings).toEqual([
        { target_field: 'key', secret_reference_id: referenceId, secret_key: null, value_format: 'string' },
      ]);
      const callsBefore = vault.calls.length;
      const cold = directory.lookupVirtualKey(defaultWorkspace, 'vault-vk');
      expect(cold).toBeInstanceOf(Promise);
      const first = await cold;
      expect(first).toMatchObject({ refused: false, credentials: { apiKey: VAULT_SECRET_VALUE } });
      const warm = directory.lookupVirtualKey(defaultWorkspace, 'vault-vk');
      expect(warm).not.toBeInstanceOf(Promise);
      expect(resolved(warm as DirectoryLookup).credentials.apiKey).toBe(VAULT_SECRET_VALUE);
      expect(vault.calls.length).toBe(callsBefore + 1);
    });

    it('a manager that cannot be reached is a refusal naming the reference', async () => {
      const created = await t.request('POST', '/v1/secret-references', {
        body: {
          name: 'Broken vault',
          slug: 'broken-vault',
          manager_type: 'hashicorp_vault',
          auth_config: { vault_auth_type: 'token', vault_addr: vault.url, vault_token: VAULT_TOKEN },
          secret_path: 'missing/secret',
        },
      });
      expect(created.status).toBe(200);
      await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'Broken',
          slug: 'broken-vk',
          provider: 'openai',
          secret_mappings: [{ target_field: 'key', secret_reference_id: 'broken-vault' }],
        },
      });
      vaultUp = false;
      const refused = await directory.lookupVirtualKey(defaultWorkspace, 'broken-vk');
      vaultUp = true;
      expect(refused).toMatchObject({ refused: true, reason: 'secret_unavailable' });
      expect((refused as { message: string }).message).toContain("'Broken vault'");
    });

    it('an integration key from a secret reference reaches its providers', async () => {
      const integration = await t.request('POST', '/v1/integrations', {
        body: {
          name: 'Vault-backed OpenAI',
          slug: 'openai-vault',
          ai_provider_id: 'openai',
          secret_mappings: [{ target_field: 'key', secret_reference_id: referenceId }],
        },
      });
      expect(integration.status).toBe(200);
      expect(integration.body.masked_key).toBeNull();
      await t.request('PUT', '/v1/integrations/openai-vault/workspaces', {
        body: { workspaces: [{ id: 'default', enabled: true }] },
      });
      const lookup = await directory.lookupProviderSlug(defaultWorkspace, 'openai-vault');
      expect(lookup).toMatchObject({ refused: false, credentials: { apiKey: VAULT_SECRET_VALUE } });
      // Granted to W2 too: the reference does not allow W2, so W2's provider is refused.
      await t.request('PUT', '/v1/integrations/openai-vault/workspaces', {
        body: { workspaces: [{ id: 'other', enabled: true }] },
      });
      expect(await directory.lookupProviderSlug(otherWorkspace, 'openai-vault')).toMatchObject({
        refused: true,
        reason: 'secret_not_allowed',
      });
    });

    it('deleting a reference in use is refused naming its users; an unused one is deleted', async () => {
      const refused = await t.request('DELETE', '/v1/secret-references/team-openai');
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('secret_reference_in_use');
      expect(refused.body.error.message).toContain("integration 'openai-vault'");
      expect(refused.body.error.message).toContain("virtual key 'vault-vk'");
      await t.request('DELETE', '/v1/virtual-keys/broken-vk', { key: workspaceKey });
      const deleted = await t.request('DELETE', '/v1/secret-references/broken-vault');
      expect(deleted.status).toBe(200);
      expect((await t.request('GET', '/v1/secret-references/broken-vault')).status).toBe(404);
    });

    it('updating a reference merges the auth config and drops the cached value', async () => {
      const updated = await t.request('PUT', '/v1/secret-references/team-openai', {
        body: { auth_config: { vault_namespace: 'team' }, allow_all_workspaces: true },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.auth_config).toMatchObject({ vault_namespace: 'team', vault_addr: vault.url });
      expect(updated.body.allow_all_workspaces).toBe(true);
      const callsBefore = vault.calls.length;
      const lookup = directory.lookupVirtualKey(defaultWorkspace, 'vault-vk');
      expect(lookup).toBeInstanceOf(Promise);
      await lookup;
      expect(vault.calls[vault.calls.length - 1].headers['x-vault-namespace']).toBe('team');
      expect(vault.calls.length).toBe(callsBefore + 1);
    });
  });

  describe('minted provider tokens', () => {
    it('a Vertex service account is exchanged for an access token once, then served from memory', async () => {
      await t.request('PUT', '/v1/integrations/vertex-sa/workspaces', {
        body: { workspaces: [{ id: 'default', enabled: true }] },
      });
      const cold = directory.lookupProviderSlug(defaultWorkspace, 'vertex-sa');
      expect(cold).toBeInstanceOf(Promise);
      const first = (await cold) as ResolvedProvider;
      expect(first.credentials).toEqual({
        vertexProjectId: 'my-project',
        vertexRegion: 'us-central1',
        vertexAccessToken: 'ya29.minted-1',
      });
      const assertion = new URLSearchParams(google.calls[0].body).get('assertion')!;
      const claims = JSON.parse(Buffer.from(assertion.split('.')[1], 'base64url').toString());
      expect(claims).toMatchObject({
        iss: 'gateway@my-project.iam.gserviceaccount.com',
        aud: `${google.url}/token`,
      });
      const warm = directory.lookupProviderSlug(defaultWorkspace, 'vertex-sa');
      expect(warm).not.toBeInstanceOf(Promise);
      expect(google.calls).toHaveLength(1);
    });

    it('an Azure Entra ID application gets a client-credentials token', async () => {
      const entra = await httpStub((request, body, response) => {
        const form = new URLSearchParams(body);
        if (request.url !== '/tenant-1/oauth2/v2.0/token' || form.get('client_secret') !== ENTRA_SECRET) {
          return json(response, 401, {
            error: 'invalid_client',
            error_description: 'AADSTS7000215: Invalid client secret',
          });
        }
        json(response, 200, { access_token: `entra-token-for-${form.get('scope')}`, expires_in: 3599 });
      });
      try {
        const created = await t.request('POST', '/v1/integrations', {
          body: {
            name: 'Azure Entra',
            slug: 'azure-entra',
            ai_provider_id: 'azure-openai',
            configurations: {
              azure_auth_mode: 'entra',
              azure_resource_name: 'contoso',
              azure_entra_tenant_id: 'tenant-1',
              azure_entra_client_id: 'client-1',
              azure_entra_client_secret: ENTRA_SECRET,
              azure_authority_host: entra.url,
              azure_deployment_config: [
                { azure_api_version: '2024-10-21', azure_deployment_name: 'd', azure_model_slug: 'gpt-4o' },
              ],
            },
          },
        });
        expect(created.status).toBe(200);
        expect(created.body.configurations.masked_azure_entra_client_secret).toBe('ent...4321');
        await t.request('PUT', '/v1/integrations/azure-entra/workspaces', {
          body: { workspaces: [{ id: 'default', enabled: true }] },
        });
        const lookup = (await directory.lookupProviderSlug(
          defaultWorkspace,
          'azure-entra',
        )) as ResolvedProvider;
        expect(lookup.credentials.azureEntraToken).toBe(
          'entra-token-for-https://cognitiveservices.azure.com/.default',
        );
        expect(lookup.credentials.apiKey).toBeUndefined();
        await t.request('PUT', '/v1/integrations/azure-entra', {
          body: { configurations: { azure_entra_client_secret: 'wrong-secret-000000000' } },
        });
        const refused = await directory.lookupProviderSlug(defaultWorkspace, 'azure-entra');
        expect(refused).toMatchObject({ refused: true, reason: 'token_unavailable' });
        expect((refused as { message: string }).message).toContain('AADSTS7000215');
      } finally {
        await entra.close();
      }
    });
  });

  describe('Bedrock assumed role', () => {
    it('is exchanged through STS, signed with the gateway identity, for temporary credentials', async () => {
      const sts = await httpStub((request, body, response) => {
        const form = new URLSearchParams(body);
        const signed = String(request.headers.authorization ?? '').startsWith(
          'AWS4-HMAC-SHA256 Credential=AKIAGATEWAY/',
        );
        if (!signed || form.get('Action') !== 'AssumeRole' || form.get('ExternalId') !== 'ext-42') {
          response.writeHead(403, { 'content-type': 'text/xml' });
          return response.end(
            '<ErrorResponse><Error><Code>AccessDenied</Code><Message>not allowed</Message></Error></ErrorResponse>',
          );
        }
        response.writeHead(200, { 'content-type': 'text/xml' });
        response.end(
          `<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIATEMP</AccessKeyId>` +
            `<SecretAccessKey>temp-secret</SecretAccessKey><SessionToken>temp-session</SessionToken>` +
            `<Expiration>${new Date(Date.now() + 3600_000).toISOString()}</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>`,
        );
      });
      const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
      try {
        await t.request('POST', '/v1/integrations', {
          body: {
            name: 'Bedrock STS',
            slug: 'bedrock-sts',
            ai_provider_id: 'bedrock',
            configurations: {
              aws_auth_type: 'assumedRole',
              aws_region: 'us-east-1',
              aws_role_arn: 'arn:aws:iam::123456789012:role/bedrock',
              aws_external_id: 'ext-42',
              aws_sts_endpoint: sts.url,
            },
          },
        });
        await t.request('PUT', '/v1/integrations/bedrock-sts/workspaces', {
          body: { workspaces: [{ id: 'default', enabled: true }] },
        });
        delete process.env.AWS_ACCESS_KEY_ID;
        const noIdentity = await directory.lookupProviderSlug(defaultWorkspace, 'bedrock-sts');
        expect(noIdentity).toMatchObject({ refused: true, reason: 'token_unavailable' });
        expect((noIdentity as { message: string }).message).toMatch(/AWS_ACCESS_KEY_ID/);
        process.env.AWS_ACCESS_KEY_ID = 'AKIAGATEWAY';
        process.env.AWS_SECRET_ACCESS_KEY = 'gateway-secret';
        // A failed exchange is remembered for 2 s, so a broken identity costs no call per request.
        expect(await directory.lookupProviderSlug(defaultWorkspace, 'bedrock-sts')).toMatchObject({
          refused: true,
        });
        await sleep(2100);
        const lookup = (await directory.lookupProviderSlug(
          defaultWorkspace,
          'bedrock-sts',
        )) as ResolvedProvider;
        expect(lookup.credentials).toEqual({
          awsRegion: 'us-east-1',
          awsAccessKeyId: 'ASIATEMP',
          awsSecretAccessKey: 'temp-secret',
          awsSessionToken: 'temp-session',
        });
        expect(directory.lookupProviderSlug(defaultWorkspace, 'bedrock-sts')).not.toBeInstanceOf(Promise);
        expect(sts.calls).toHaveLength(1);
      } finally {
        if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
        else process.env.AWS_ACCESS_KEY_ID = saved.id;
        if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
        else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
        await sts.close();
      }
    });
  });

  describe('deleting an integration', () => {
    it('removes its grants, models and providers, and the directory forgets them', async () => {
      const deleted = await t.request('DELETE', '/v1/integrations/bedrock-keys');
      expect(deleted.status).toBe(200);
      const azure = await t.request('DELETE', '/v1/integrations/azure-main');
      expect(azure.body.deleted_providers).toEqual([{ slug: 'azure-eu', workspace_id: defaultWorkspace }]);
      expect(directory.lookupProviderSlug(defaultWorkspace, 'azure-eu')).toBeNull();
      expect((await t.request('GET', '/v1/integrations/azure-main')).status).toBe(404);
    });
  });

  describe('audit', () => {
    it('records writes without the secrets they carried', async () => {
      const audit = await t.request('GET', '/v1/audit-logs?resource_type=integration&page_size=100');
      expect(audit.status).toBe(200);
      const actions = audit.body.data.map((row: { action: string }) => row.action);
      expect(actions).toEqual(expect.arrayContaining(['create', 'update', 'delete']));
      expect(JSON.stringify(audit.body)).not.toContain(OPENAI_KEY);
      const references = await t.request(
        'GET',
        '/v1/audit-logs?resource_type=secret_reference&page_size=100',
      );
      expect(references.body.total).toBeGreaterThan(0);
      expect(JSON.stringify(references.body)).not.toContain(VAULT_TOKEN);
    });
  });

  describe('secrets at rest', () => {
    it('no stored credential is in the database in the clear', async () => {
      // Let the audit batch land too: its request bodies are redacted, and checked here as well.
      await sleep(700);
      const secrets = [
        OPENAI_KEY,
        ROTATED_KEY,
        VK_KEY,
        AWS_SECRET,
        VAULT_TOKEN,
        ENTRA_SECRET,
        SA_KEY_FRAGMENT,
        'gsk_team_key_abcdefghijklmnop',
      ];
      if (currentDialect() === 'sqlite') {
        const path = t.config.database.kind === 'sqlite' ? t.config.database.path : '';
        let scanned = 0;
        let sealedSeen = false;
        for (const file of [path, `${path}-wal`]) {
          let bytes: Buffer;
          try {
            bytes = readFileSync(file);
          } catch {
            continue;
          }
          scanned += 1;
          for (const secret of secrets)
            expect({ file, secret, found: bytes.includes(Buffer.from(secret)) }).toEqual({
              file,
              secret,
              found: false,
            });
          sealedSeen ||= bytes.includes(Buffer.from('enc:v1:'));
        }
        expect(scanned).toBeGreaterThan(0);
        // The sealed form is there: the scan reads the right files.
        expect(sealedSeen).toBe(true);
      } else {
        const client = new Client({
          connectionString: t.config.database.kind === 'postgres' ? t.config.database.url : '',
        });
        await client.connect();
        try {
          const tables = await client.query(
            `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
          );
          let sealed = 0;
          for (const { table_name } of tables.rows) {
            const rows = await client.query(`SELECT * FROM "${table_name}"`);
            const text = JSON.stringify(rows.rows);
            for (const secret of secrets)
              expect({ table_name, secret, found: text.includes(secret) }).toEqual({
                table_name,
                secret,
                found: false,
              });
            if (text.includes('enc:v1:')) sealed += 1;
          }
          expect(sealed).toBeGreaterThanOrEqual(3);
        } finally {
          await client.end();
        }
      }
    });
  });
});
