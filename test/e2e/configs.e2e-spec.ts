import { AuditService } from '@switchboard/audit';
import { DataSource } from 'typeorm';
import { ConfigStore } from '@switchboard/configs';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { TestApp, describeE2E, itWithRedis, startTestApp } from '../support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const fallback = {
  retry: { attempts: 2, on_status_codes: [429, 503] },
  cache: { mode: 'simple', max_age: 3600 },
  strategy: { mode: 'fallback' },
  targets: [
    { provider: 'openai', api_key: 'sk-live-0123456789abcdef' },
    { provider: 'anthropic', virtual_key: 'anthropic-main', anthropic_beta: 'tools-2024-04-04' },
  ],
};

describeE2E('configs', () => {
  let t: TestApp;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let workspaceKey: string;
  let otherKey: string;
  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;
  const store = () => t.app.get(ConfigStore);

  async function createConfig(body: Record<string, unknown>, key?: string) {
    const response = await t.request('POST', '/v1/configs', {
      key,
      body: {
        name: unique('Config'),
        config: { provider: 'openai' },
        ...(key ? {} : { workspace_id: workspaceId }),
        ...body,
      },
    });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body.data as { id: string; slug: string; version_id: string; is_default: number };
  }

  beforeAll(async () => {
    t = await startTestApp();
    const make = async (name: string) => {
      const response = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique(name) } });
      expect(response.status).toBe(200);
      return response.body.id as string;
    };
    workspaceId = await make('Configs W');
    otherWorkspaceId = await make('Configs W2');
    const key = async (workspace: string) => {
      const response = await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: unique('key'), workspace_id: workspace, scopes: WORKSPACE_SCOPES },
      });
      expect(response.status).toBe(200);
      return response.body.key as string;
    };
    workspaceKey = await key(workspaceId);
    otherKey = await key(otherWorkspaceId);
  });
  afterAll(async () => t?.close());

  describe('create', () => {
    it('stores a config with its first version and answers in the reference shape, secrets masked', async () => {
      const response = await t.request('POST', '/v1/configs', {
        body: { name: 'Primary routing', config: fallback, workspace_id: workspaceId },
      });
      expect(response.status).toBe(200);
      expect(response.body.success).toBe(true);
      const data = response.body.data;
      expect(data).toMatchObject({
        object: 'config',
        name: 'Primary routing',
        workspace_id: workspaceId,
        is_default: 0,
        status: 'active',
        version: 1,
      });
      expect(data.id).toMatch(UUID);
      expect(data.version_id).toMatch(UUID);
      expect(data.slug).toMatch(/^pc-primary-routing-[0-9a-f]{6}$/);
      expect(data.config.targets[0].api_key).toBe('sk-l****cdef');
      expect(data.config.targets[1]).toEqual(fallback.targets[1]);
      expect(JSON.stringify(data)).not.toContain('sk-live-0123456789abcdef');
    });

    it('a workspace key creates in its own workspace without naming it', async () => {
      const created = await createConfig({}, workspaceKey);
      const read = await t.request('GET', `/v1/configs/${created.slug}`, { key: workspaceKey });
      expect(read.body.data.workspace_id).toBe(workspaceId);
    });

    it('an admin key must name the workspace', async () => {
      const response = await t.request('POST', '/v1/configs', { body: { name: 'x', config: {} } });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'workspace_required', param: 'workspace_id' });
    });

    it('a workspace key cannot create in another workspace', async () => {
      const response = await t.request('POST', '/v1/configs', {
        key: workspaceKey,
        body: { name: 'x', config: {}, workspace_id: otherWorkspaceId },
      });
      expect(response.status).toBe(404);
    });

    it('rejects an invalid config with AB01 naming the path of the bad field', async () => {
      const response = await t.request('POST', '/v1/configs', {
        body: {
          name: 'bad',
          workspace_id: workspaceId,
          config: {
            strategy: { mode: 'fallback' },
            targets: [{ provider: 'openai' }, { provider: 'openai', retry: { attempts: 9 } }],
          },
        },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'AB01',
        param: 'targets[1].retry.attempts',
        type: 'invalid_request_error',
      });
      expect(response.body.error.message).toContain('targets[1].retry.attempts must be at most 5');
    });

    it('rejects a request body without name or with unknown fields', async () => {
      const missing = await t.request('POST', '/v1/configs', {
        body: { config: {}, workspace_id: workspaceId },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.error.param).toBe('name');
      const unknown = await t.request('POST', '/v1/configs', {
        body: { name: 'x', config: {}, workspace_id: workspaceId, colour: 'red' },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.param).toBe('colour');
      const notObject = await t.request('POST', '/v1/configs', {
        body: { name: 'x', config: 'provider=openai', workspace_id: workspaceId },
      });
      expect(notObject.status).toBe(400);
      expect(notObject.body.error.param).toBe('config');
    });

    it('takes a chosen slug once per organisation', async () => {
      const slug = unique('my-slug');
      await createConfig({ slug });
      const again = await t.request('POST', '/v1/configs', {
        body: { name: 'dup', slug, config: {}, workspace_id: otherWorkspaceId },
      });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('config_slug_taken');
      const idShaped = await t.request('POST', '/v1/configs', {
        body: {
          name: 'x',
          slug: '0b7e2a6c-1111-4f0e-9c55-2d7c6c1c0a11',
          config: {},
          workspace_id: workspaceId,
        },
      });
      expect(idShaped.status).toBe(400);
    });
  });

  describe('read and list', () => {
    it('reads by slug and by id', async () => {
      const created = await createConfig({ config: fallback });
      for (const ref of [created.slug, created.id]) {
        const response = await t.request('GET', `/v1/configs/${ref}`);
        expect(response.status).toBe(200);
        expect(response.body.data).toMatchObject({
          id: created.id,
          slug: created.slug,
          version_id: created.version_id,
        });
        expect(response.body.data.config.strategy).toEqual({ mode: 'fallback' });
      }
      expect((await t.request('GET', '/v1/configs/no-such-config')).status).toBe(404);
    });

    it("another workspace's key gets 404, as if the config did not exist", async () => {
      const created = await createConfig({});
      for (const [method, url, body] of [
        ['GET', `/v1/configs/${created.slug}`],
        ['GET', `/v1/configs/${created.id}`],
        ['GET', `/v1/configs/${created.slug}/versions`],
        ['PUT', `/v1/configs/${created.slug}`, { name: 'stolen' }],
        ['DELETE', `/v1/configs/${created.slug}`],
      ] as const) {
        const response = await t.request(method, url, { key: otherKey, body });
        expect({ method, status: response.status, code: response.body.error?.code }).toEqual({
          method,
          status: 404,
          code: 'config_not_found',
        });
      }
      expect((await t.request('GET', `/v1/configs/${created.slug}`, { key: workspaceKey })).status).toBe(200);
    });

    it('lists a workspace principal only its own configs, and admins by workspace filter', async () => {
      const mine = await createConfig({});
      const theirs = await createConfig({ workspace_id: otherWorkspaceId });
      const listed = await t.request('GET', '/v1/configs?page_size=100', { key: workspaceKey });
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ object: 'list', success: true });
      const ids = listed.body.data.map((config: { id: string }) => config.id);
      expect(ids).toContain(mine.id);
      expect(ids).not.toContain(theirs.id);
      for (const item of listed.body.data) expect(item.workspace_id).toBe(workspaceId);
      expect(listed.body.data[0].config).toBeUndefined();

      const filtered = await t.request('GET', `/v1/configs?workspace_id=${otherWorkspaceId}&page_size=100`);
      expect(filtered.body.data.map((config: { id: string }) => config.id)).toEqual([theirs.id]);
      const forbidden = await t.request('GET', `/v1/configs?workspace_id=${workspaceId}`, { key: otherKey });
      expect(forbidden.status).toBe(404);
    });

    it('pages, counts and filters by status', async () => {
      const page = await t.request(
        'GET',
        `/v1/configs?workspace_id=${workspaceId}&page_size=1&current_page=1`,
      );
      expect(page.body.data).toHaveLength(1);
      expect(page.body.total).toBeGreaterThan(2);
      const archived = await createConfig({});
      await t.request('PUT', `/v1/configs/${archived.slug}`, { body: { status: 'archived' } });
      const onlyArchived = await t.request('GET', `/v1/configs?workspace_id=${workspaceId}&status=archived`);
      expect(onlyArchived.body.data.map((config: { id: string }) => config.id)).toContain(archived.id);
      for (const item of onlyArchived.body.data) expect(item.status).toBe('archived');
    });
  });

  describe('update and versions', () => {
    it('makes a new version on every update and lists them newest first', async () => {
      const created = await createConfig({ name: 'Versioned', config: { provider: 'openai' } });
      const renamed = await t.request('PUT', `/v1/configs/${created.slug}`, {
        body: { name: 'Versioned v2' },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ success: true, data: { version: 2, name: 'Versioned v2' } });
      const reconfigured = await t.request('PUT', `/v1/configs/${created.id}`, {
        body: { config: { provider: 'anthropic', request_timeout: 5000 } },
      });
      expect(reconfigured.body.data).toMatchObject({
        version: 3,
        config: { provider: 'anthropic', request_timeout: 5000 },
      });
      const versionIds = [
        created.version_id,
        renamed.body.data.version_id,
        reconfigured.body.data.version_id,
      ];
      expect(new Set(versionIds).size).toBe(3);

      const versions = await t.request('GET', `/v1/configs/${created.slug}/versions`);
      expect(versions.status).toBe(200);
      expect(versions.body).toMatchObject({ object: 'list', total: 3 });
      expect(versions.body.data.map((version: { version_id: string }) => version.version_id)).toEqual(
        [...versionIds].reverse(),
      );
      const [latest, , first] = versions.body.data;
      expect(latest).toMatchObject({
        id: created.id,
        slug: created.slug,
        name: 'Versioned v2',
        format: 'json',
        type: 'ORG_CONFIG',
        object: 'config',
      });
      expect(JSON.parse(latest.config)).toEqual({ provider: 'anthropic', request_timeout: 5000 });
      expect(JSON.parse(first.config)).toEqual({ provider: 'openai' });
      expect(first.name).toBe('Versioned');
    });

    it('validates an updated config and leaves the old one in place on failure', async () => {
      const created = await createConfig({ config: { provider: 'openai' } });
      const bad = await t.request('PUT', `/v1/configs/${created.slug}`, {
        body: { config: { cache: { mode: 'semantic' } } },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'AB01', param: 'cache.mode' });
      const read = await t.request('GET', `/v1/configs/${created.slug}`);
      expect(read.body.data).toMatchObject({ version: 1, config: { provider: 'openai' } });
      expect((await t.request('GET', `/v1/configs/${created.slug}/versions`)).body.total).toBe(1);
    });

    it('refuses a masked secret sent back from a read', async () => {
      const created = await createConfig({ config: fallback });
      const read = await t.request('GET', `/v1/configs/${created.slug}`);
      const response = await t.request('PUT', `/v1/configs/${created.slug}`, {
        body: { config: read.body.data.config },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'AB01', param: 'targets[0].api_key' });
    });

    it('keeps the stored secret out of every version listing', async () => {
      const created = await createConfig({ config: fallback });
      const versions = await t.request('GET', `/v1/configs/${created.slug}/versions`);
      expect(JSON.stringify(versions.body)).not.toContain('sk-live-0123456789abcdef');
    });
  });

  describe('workspace default', () => {
    it('has one default per workspace: a new default replaces the old one', async () => {
      const first = await createConfig({ isDefault: 1, workspace_id: otherWorkspaceId });
      expect(first.is_default).toBe(1);
      expect(store().defaultFor(otherWorkspaceId)?.id).toBe(first.id);
      const second = await createConfig({ is_default: true, workspace_id: otherWorkspaceId });
      expect((await t.request('GET', `/v1/configs/${first.slug}`)).body.data.is_default).toBe(0);
      expect(store().defaultFor(otherWorkspaceId)?.id).toBe(second.id);

      const switched = await t.request('PUT', `/v1/configs/${first.slug}`, { body: { isDefault: 1 } });
      expect(switched.body.data.is_default).toBe(1);
      expect((await t.request('GET', `/v1/configs/${second.slug}`)).body.data.is_default).toBe(0);
      expect(store().defaultFor(otherWorkspaceId)?.id).toBe(first.id);
    });

    it('archiving the default clears it; asking for an archived default is refused', async () => {
      const config = await createConfig({ isDefault: 1, workspace_id: otherWorkspaceId });
      const both = await t.request('PUT', `/v1/configs/${config.slug}`, {
        body: { status: 'archived', isDefault: 1 },
      });
      expect(both.status).toBe(409);
      const archived = await t.request('PUT', `/v1/configs/${config.slug}`, { body: { status: 'archived' } });
      expect(archived.body.data).toMatchObject({ status: 'archived', is_default: 0 });
      expect(store().defaultFor(otherWorkspaceId)).toBeNull();
    });
  });

  describe('delete', () => {
    it('removes the config and its versions', async () => {
      const created = await createConfig({ isDefault: 1 });
      await t.request('PUT', `/v1/configs/${created.slug}`, { body: { name: 'two' } });
      expect(store().find(workspaceId, created.slug)).not.toBeNull();
      const removed = await t.request('DELETE', `/v1/configs/${created.slug}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toMatchObject({ success: true, id: created.id, deleted: true });
      expect((await t.request('GET', `/v1/configs/${created.slug}`)).status).toBe(404);
      expect((await t.request('GET', `/v1/configs/${created.id}/versions`)).status).toBe(404);
      expect((await t.request('DELETE', `/v1/configs/${created.slug}`)).status).toBe(404);
      expect(store().find(workspaceId, created.slug)).toBeNull();
      expect(store().defaultFor(workspaceId)).toBeNull();
    });
  });

  it('keeps inline credentials sealed at rest, in configs and in their versions', async () => {
    const created = await createConfig({ config: fallback });
    await t.request('PUT', `/v1/configs/${created.slug}`, {
      body: {
        config: { ...fallback, targets: [{ provider: 'openai', api_key: 'sk-live-rotated-9876543210' }] },
      },
    });
    // The id is a UUID we made; inlined because the two dialects spell parameters differently.
    const db = t.app.get(DataSource);
    const rows: { config: unknown }[] = [
      ...(await db.query(`SELECT config FROM configs WHERE id = '${created.id}'`)),
      ...(await db.query(`SELECT config FROM config_versions WHERE config_id = '${created.id}'`)),
    ];
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const text = typeof row.config === 'string' ? row.config : JSON.stringify(row.config);
      expect(text).not.toContain('sk-live-0123456789abcdef');
      expect(text).not.toContain('sk-live-rotated-9876543210');
      expect(text).toMatch(/"api_key":"enc:v1:[0-9a-f]{8}:/);
    }
    // Opened for the data plane, masked for readers.
    const resolved = await store().resolveForRequest({ workspaceId, header: created.slug });
    expect(resolved!.config.targets![0].api_key).toBe('sk-live-rotated-9876543210');
    const read = await t.request('GET', `/v1/configs/${created.slug}`);
    expect(JSON.stringify(read.body)).not.toContain('sk-live-rotated-9876543210');
  });

  it('audits every write', async () => {
    const created = await createConfig({});
    await t.request('PUT', `/v1/configs/${created.slug}`, { body: { name: 'audited' } });
    await t.request('DELETE', `/v1/configs/${created.slug}`);
    await t.app.get(AuditService).flush();
    const logs = await t.request('GET', '/v1/audit-logs?resource_type=config&page_size=100');
    expect(logs.status).toBe(200);
    const actions = logs.body.data
      .filter((entry: { resource_id: string | null }) => entry.resource_id === created.slug)
      .map((entry: { action: string }) => entry.action)
      .sort();
    expect(actions).toEqual(['delete', 'update']);
    expect(logs.body.data.some((entry: { action: string; uri: string }) => entry.action === 'create')).toBe(
      true,
    );
  });

  describe('request resolution (the data plane view)', () => {
    it('finds a config by header slug, id or inline JSON, and says when it does not', async () => {
      const created = await createConfig({ config: fallback });
      const bySlug = await store().resolveForRequest({ workspaceId, header: created.slug });
      expect(bySlug).toMatchObject({
        id: created.id,
        source: 'header',
        versionId: created.version_id,
        cache: { mode: 'simple', max_age: 3600 },
      });
      expect(bySlug!.config.targets![0].api_key).toBe('sk-live-0123456789abcdef');
      expect((await store().resolveForRequest({ workspaceId, header: created.id }))!.id).toBe(created.id);

      const inline = await store().resolveForRequest({
        workspaceId,
        header: '{"provider":"openai","retry":{"attempts":1}}',
      });
      expect(inline).toMatchObject({
        id: null,
        source: 'inline',
        config: { provider: 'openai', retry: { attempts: 1 } },
      });
      expect(inline!.scope).toMatch(new RegExp(`^${workspaceId}:inline:[0-9a-f]{32}$`));

      await expect(
        store().resolveForRequest({
          workspaceId,
          header:
            '{"targets":[{"provider":"openai"},{"provider":"openai","retry":{"attempts":7}}],"strategy":{"mode":"fallback"}}',
        }),
      ).rejects.toMatchObject({ status: 400, code: 'AB01', param: 'targets[1].retry.attempts' });
      await expect(store().resolveForRequest({ workspaceId, header: '{not json' })).rejects.toMatchObject({
        code: 'AB01',
        param: 'x-gateway-config',
      });
      await expect(store().resolveForRequest({ workspaceId, header: 'pc-missing' })).rejects.toMatchObject({
        status: 404,
        code: 'config_not_found',
      });
      await expect(
        store().resolveForRequest({ workspaceId: otherWorkspaceId, header: created.slug }),
      ).rejects.toMatchObject({
        status: 404,
      });
    });

    it("uses the API key's default config, then the workspace default", async () => {
      const keyDefault = await createConfig({ config: { provider: 'anthropic' } });
      const resolved = await store().resolveForRequest({
        workspaceId,
        apiKeyDefaults: { config_id: keyDefault.slug },
      });
      expect(resolved).toMatchObject({ id: keyDefault.id, source: 'api_key_default' });
      await expect(
        store().resolveForRequest({ workspaceId, apiKeyDefaults: { config_id: 'pc-deleted' } }),
      ).rejects.toMatchObject({ status: 404, param: 'x-gateway-api-key' });

      const other = await createConfig({ config: { provider: 'openai' } });
      const overridden = await store().resolveForRequest({
        workspaceId,
        header: other.slug,
        apiKeyDefaults: { config_id: keyDefault.slug },
      });
      expect(overridden!.id).toBe(other.id);
      await expect(
        store().resolveForRequest({
          workspaceId,
          header: other.slug,
          apiKeyDefaults: { config_id: keyDefault.slug, allow_config_override: false },
        }),
      ).rejects.toMatchObject({ status: 403, code: 'config_override_not_allowed' });

      const workspaceDefault = await createConfig({ isDefault: 1 });
      expect(await store().resolveForRequest({ workspaceId })).toMatchObject({
        id: workspaceDefault.id,
        source: 'workspace_default',
      });
      await t.request('DELETE', `/v1/configs/${workspaceDefault.slug}`);
      expect(await store().resolveForRequest({ workspaceId })).toBeNull();
    });

    it('does not route with an archived config, and sees the new version at once after an update', async () => {
      const created = await createConfig({ config: { provider: 'openai' } });
      await t.request('PUT', `/v1/configs/${created.slug}`, { body: { config: { provider: 'anthropic' } } });
      expect((await store().resolveForRequest({ workspaceId, header: created.slug }))!.config.provider).toBe(
        'anthropic',
      );
      await t.request('PUT', `/v1/configs/${created.slug}`, { body: { status: 'archived' } });
      await expect(store().resolveForRequest({ workspaceId, header: created.slug })).rejects.toMatchObject({
        status: 404,
      });
      await t.request('PUT', `/v1/configs/${created.slug}`, { body: { status: 'active' } });
      expect((await store().resolveForRequest({ workspaceId, header: created.slug }))!.id).toBe(created.id);
    });

    it('loads every active config at start', async () => {
      const created = await createConfig({ isDefault: 1, workspace_id: otherWorkspaceId });
      const fresh = await startTestApp({}, t.database);
      try {
        const freshStore = fresh.app.get(ConfigStore);
        expect(freshStore.find(otherWorkspaceId, created.slug)?.id).toBe(created.id);
        expect(freshStore.defaultFor(otherWorkspaceId)?.id).toBe(created.id);
      } finally {
        await fresh.close();
      }
    });

    itWithRedis('another replica sees a change through the invalidation bus (Redis)', async () => {
      const replica = await startTestApp({}, t.database);
      try {
        const created = await createConfig({ config: { provider: 'openai' } });
        const other = replica.app.get(ConfigStore);
        const seen = async (check: () => boolean) => {
          for (let i = 0; i < 100 && !check(); i += 1) await sleep(20);
          return check();
        };
        expect(await seen(() => other.find(workspaceId, created.slug) !== null)).toBe(true);
        await t.request('PUT', `/v1/configs/${created.slug}`, {
          body: { config: { provider: 'anthropic' } },
        });
        expect(
          await seen(() => other.find(workspaceId, created.slug)?.config?.provider === 'anthropic'),
        ).toBe(true);
        await t.request('DELETE', `/v1/configs/${created.slug}`);
        expect(await seen(() => other.find(workspaceId, created.slug) === null)).toBe(true);
      } finally {
        await replica.close();
      }
    });
  });
});
