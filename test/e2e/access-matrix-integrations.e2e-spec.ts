import { A, Fixtures, MatrixRow, describeAccessMatrix, none } from '../support/access-matrix';

/**
 * Integrations, providers, virtual keys, secret references and model pricing in the access matrix
 * (harness and principals: test/support/access-matrix.ts). Expectations come from
 * libs/access/src/capability-matrix.ts (integrations.create/update/delete and
 * secret_references.create/update/delete are organisation-only) and role-matrix.ts (a workspace
 * manager lists and reads integrations and secret references and manages providers and virtual
 * keys; a member lists and reads providers and virtual keys and reads model pricing only).
 * Targets live in W: the integration and the secret reference are granted to W alone, so W2's key
 * gets 404 where it holds the permission.
 */
interface Targets {
  integration: string;
  provider: string;
  virtualKey: string;
  reference: string;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter += 1)}`;

async function freshIntegration(f: Fixtures): Promise<string> {
  const slug = unique('matrix-int');
  await f.admin('POST', '/v1/integrations', {
    name: slug,
    slug,
    ai_provider_id: 'openai',
    key: 'sk-matrix-0000000000000000',
  });
  await f.admin('PUT', `/v1/integrations/${slug}/workspaces`, {
    workspaces: [{ id: f.workspaceId, enabled: true }],
    create_default_provider: false,
  });
  return slug;
}

async function freshProvider(f: Fixtures & Targets): Promise<string> {
  const slug = unique('matrix-provider');
  await f.admin('POST', '/v1/providers', {
    name: slug,
    slug,
    integration_id: f.integration,
    workspace_id: f.workspaceId,
  });
  return slug;
}

async function freshVirtualKey(f: Fixtures): Promise<string> {
  const slug = unique('matrix-vk');
  await f.admin('POST', '/v1/virtual-keys', {
    name: slug,
    slug,
    provider: 'anthropic',
    key: 'sk-ant-matrix-00000000000000',
    workspace_id: f.workspaceId,
  });
  return slug;
}

async function freshReference(f: Fixtures): Promise<string> {
  const created = await f.admin('POST', '/v1/secret-references', {
    name: unique('matrix-ref'),
    manager_type: 'hashicorp_vault',
    auth_config: {
      vault_auth_type: 'token',
      vault_addr: 'http://127.0.0.1:8200',
      vault_token: 'hvs.matrix-token',
    },
    secret_path: 'matrix/key',
    allowed_workspaces: [f.workspaceId],
  });
  return created.id;
}

async function freshModel(f: Fixtures & Targets): Promise<string> {
  const model = unique('custom-model');
  await f.admin('PUT', `/v1/integrations/${f.integration}/models`, {
    models: [{ slug: model, enabled: true, is_custom: true }],
  });
  return model;
}

const inW = (f: Fixtures & Targets) => `${f.workspaceId}`;

// One row per route; columns: owner, admin, manager, member, admin key (AK), workspace key of W
// (WK), wrong-workspace key of W2 (WK2), expired key, no key. A = allow (200). Lists answer 200 to
// a workspace principal holding the permission, filtered to what its workspace may use.
// prettier-ignore
const MATRIX: MatrixRow<Targets>[] = [
  // route                                                    own  adm  mgr  mem  AK   WK   WK2  exp  no
  // Integrations: creating and changing them is organisation-only; managers (and workspace keys) read those granted to W.
  ['POST /integrations',                                     [A,   A,   403, 403, A,   403, 403, 401, 401], () => ({ body: { name: unique('created'), ai_provider_id: 'openai', key: 'sk-matrix-created-000000000' } })],
  ['GET /integrations',                                      [A,   A,   A,   403, A,   A,   A,   401, 401], none],
  ['GET /integrations/:slug',                                [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { slug: f.integration } })],
  ['PUT /integrations/:slug',                                [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ params: { slug: f.integration }, body: { description: 'updated by the matrix' } })],
  ['DELETE /integrations/:slug',                             [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { slug: await freshIntegration(f) } })],
  ['GET /integrations/:slug/workspaces',                     [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { slug: f.integration } })],
  ['PUT /integrations/:slug/workspaces',                     [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ params: { slug: f.integration }, body: { workspaces: [{ id: f.workspaceId, enabled: true }] } })],
  ['GET /integrations/:slug/models',                         [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { slug: f.integration } })],
  ['PUT /integrations/:slug/models',                         [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ params: { slug: f.integration }, body: { models: [{ slug: 'gpt-4o', enabled: true }] } })],
  ['DELETE /integrations/:slug/models?slugs=:model',         [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { slug: f.integration, model: await freshModel(f) } })],
  // Providers: a workspace resource; managers and workspace keys manage them, members read.
  ['POST /providers',                                        [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: { name: unique('provider'), integration_id: f.integration, workspace_id: f.workspaceId } })],
  ['GET /providers',                                         [A,   A,   A,   A,   A,   A,   A,   401, 401], none],
  ['GET /providers/:slug?workspace_id=:ws',                  [A,   A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { slug: f.provider, ws: inW(f) } })],
  ['PUT /providers/:slug?workspace_id=:ws',                  [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { slug: f.provider, ws: inW(f) }, body: { note: 'updated by the matrix' } })],
  ['DELETE /providers/:slug?workspace_id=:ws',               [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { slug: await freshProvider(f), ws: inW(f) } })],
  // Virtual keys: the same rules under their own permissions.
  ['POST /virtual-keys',                                     [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: { name: unique('vk'), provider: 'anthropic', key: 'sk-ant-matrix-created-0000000', workspace_id: f.workspaceId } })],
  ['GET /virtual-keys',                                      [A,   A,   A,   A,   A,   A,   A,   401, 401], none],
  ['GET /virtual-keys/:slug?workspace_id=:ws',               [A,   A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { slug: f.virtualKey, ws: inW(f) } })],
  ['PUT /virtual-keys/:slug?workspace_id=:ws',               [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { slug: f.virtualKey, ws: inW(f) }, body: { note: 'updated by the matrix' } })],
  ['DELETE /virtual-keys/:slug?workspace_id=:ws',            [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { slug: await freshVirtualKey(f), ws: inW(f) } })],
  // Secret references: organisation-level; managers and workspace keys read those W may use.
  ['POST /secret-references',                                [A,   A,   403, 403, A,   403, 403, 401, 401], () => ({ body: { name: unique('ref'), manager_type: 'hashicorp_vault', auth_config: { vault_auth_type: 'token', vault_addr: 'http://127.0.0.1:8200', vault_token: 'hvs.x' }, secret_path: 'a/b' } })],
  ['GET /secret-references',                                 [A,   A,   A,   403, A,   A,   A,   401, 401], none],
  ['GET /secret-references/:id',                             [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { id: f.reference } })],
  ['PUT /secret-references/:id',                             [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ params: { id: f.reference }, body: { description: 'updated by the matrix' } })],
  ['DELETE /secret-references/:id',                          [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { id: await freshReference(f) } })],
  // Model pricing: every principal reads the catalog; an integration's prices only where it is granted.
  ['GET /model-configs/pricing/openai/gpt-4o',               [A,   A,   A,   A,   A,   A,   A,   401, 401], none],
  ['GET /model-configs/pricing/openai/gpt-4o?integration=:slug', [A, A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { slug: f.integration } })],
];

describeAccessMatrix<Targets>('access matrix: integrations', MATRIX, {
  setup: async (f) => {
    const targets = { integration: await freshIntegration(f) } as Targets;
    targets.provider = await freshProvider({ ...f, ...targets });
    targets.virtualKey = await freshVirtualKey(f);
    targets.reference = await freshReference(f);
    return targets;
  },
  more: (context) => {
    it("W2's lists hold none of W's integrations, providers, virtual keys or secret references", async () => {
      const { t, keys, fixtures } = context();
      const key = keys['wrong-workspace key'];
      const integrations = await t.request('GET', '/v1/integrations', { key });
      expect(integrations.body.data.map((row: { slug: string }) => row.slug)).not.toContain(
        fixtures.integration,
      );
      for (const path of ['/v1/providers', '/v1/virtual-keys']) {
        const listed = await t.request('GET', path, { key });
        expect(listed.status).toBe(200);
        for (const row of listed.body.data) expect(row.workspace_id).toBe(fixtures.otherWorkspaceId);
      }
      const references = await t.request('GET', '/v1/secret-references', { key });
      expect(references.body.data.map((row: { id: string }) => row.id)).not.toContain(fixtures.reference);
    });

    it("W's workspace key lists W's providers, and only W's", async () => {
      const { t, keys, fixtures } = context();
      const listed = await t.request('GET', '/v1/providers', { key: keys['workspace key'] });
      expect(listed.body.data.map((row: { slug: string }) => row.slug)).toContain(fixtures.provider);
      for (const row of listed.body.data) expect(row.workspace_id).toBe(fixtures.workspaceId);
    });
  },
});
