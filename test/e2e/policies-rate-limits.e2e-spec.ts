import { DataSource } from 'typeorm';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

/** Rate limits policies over HTTP: the spec's create table, list envelope and filters, get, update, archive. */
describeE2E('policies: rate limits', () => {
  let t: TestApp;
  let workspace: { id: string; slug: string };
  let other: { id: string; slug: string };
  let workspaceKey: { id: string; key: string };
  let otherKey: { id: string; key: string };
  let organisationId: string;

  const valid = (over: Record<string, unknown> = {}) => ({
    name: '100 RPM per API key',
    conditions: [{ key: 'workspace_id', value: workspace.id }],
    group_by: [{ key: 'api_key' }],
    type: 'requests',
    unit: 'rpm',
    value: 100,
    workspace_id: workspace.id,
    ...over,
  });

  const create = (body: unknown, key?: string) =>
    t.request('POST', '/v1/policies/rate-limits', { body, key });

  beforeAll(async () => {
    t = await startTestApp();
    const made = await t.request('POST', '/v1/admin/workspaces', {
      body: { name: 'Rate W', slug: 'rate-w' },
    });
    workspace = made.body;
    other = (await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Rate W2', slug: 'rate-w2' } }))
      .body;
    const scopes = [
      'policies.create',
      'policies.list',
      'policies.read',
      'policies.update',
      'policies.delete',
    ];
    workspaceKey = (
      await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: 'W key', workspace_id: workspace.id, scopes },
      })
    ).body;
    otherKey = (
      await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: 'W2 key', workspace_id: other.id, scopes },
      })
    ).body;
    [{ id: organisationId }] = await t.app.get(DataSource).query('SELECT id FROM organisations');
  });
  afterAll(async () => t?.close());

  it('creates a policy and answers {id, object: policy_usage_limits}', async () => {
    const response = await create(valid());
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'policy_usage_limits',
    });
    const read = await t.request('GET', `/v1/policies/rate-limits/${response.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      object: 'policy_rate_limits',
      id: response.body.id,
      name: '100 RPM per API key',
      conditions: [{ key: 'workspace_id', value: workspace.id }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 100,
      status: 'active',
      workspace_id: workspace.id,
      organisation_id: expect.any(String),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('a workspace key needs neither workspace_id nor organisation_id: the policy is its workspace', async () => {
    const { workspace_id: _omitted, ...body } = valid({ name: 'implied scope' });
    const response = await create(body, workspaceKey.key);
    expect(response.status).toBe(200);
    const read = await t.request('GET', `/v1/policies/rate-limits/${response.body.id}`, {
      key: workspaceKey.key,
    });
    expect(read.body).toMatchObject({ workspace_id: workspace.id, organisation_id: organisationId });
  });

  it('accepts a workspace slug in workspace_id and in a workspace_id condition, and stores the id', async () => {
    const response = await create(
      valid({ workspace_id: workspace.slug, conditions: [{ key: 'workspace_id', value: workspace.slug }] }),
    );
    expect(response.status).toBe(200);
    const read = await t.request('GET', `/v1/policies/rate-limits/${response.body.id}`);
    expect(read.body.workspace_id).toBe(workspace.id);
    expect(read.body.conditions).toEqual([{ key: 'workspace_id', value: workspace.id }]);
  });

  it('an admin key without workspace_id makes an organisation-wide policy', async () => {
    const response = await create(
      valid({ workspace_id: undefined, conditions: [{ key: 'organisation_id', value: organisationId }] }),
    );
    expect(response.status).toBe(200);
    const read = await t.request('GET', `/v1/policies/rate-limits/${response.body.id}`);
    expect(read.body.workspace_id).toBeNull();
    // Not visible to a workspace principal.
    expect(
      (await t.request('GET', `/v1/policies/rate-limits/${response.body.id}`, { key: workspaceKey.key }))
        .status,
    ).toBe(404);
  });

  it.each([
    ['name over 255 characters', { name: 'x'.repeat(256) }, 'name', 'maxLength'],
    ['no conditions', { conditions: [] }, 'conditions', 'arrayMinSize'],
    ['conditions missing', { conditions: undefined }, 'conditions', ''],
    ['no group_by', { group_by: [] }, 'group_by', 'arrayMinSize'],
    [
      'an unknown condition key',
      { conditions: [{ key: 'user_id', value: 'u' }] },
      'conditions[0].key',
      'isPolicyKey',
    ],
    ['a condition without value', { conditions: [{ key: 'metadata.team' }] }, 'conditions[0].value', ''],
    ['an empty metadata field', { group_by: [{ key: 'metadata.' }] }, 'group_by[0].key', 'isPolicyKey'],
    ['an unknown type', { type: 'cost' }, 'type', 'isIn'],
    ['an unknown unit', { unit: 'rps' }, 'unit', 'isIn'],
    ['a value that is not a number', { value: '100' }, 'value', ''],
    ['a zero value', { value: 0 }, 'value', 'isPositive'],
    ['organisation_id that is not a uuid', { organisation_id: 'org' }, 'organisation_id', 'isUuid'],
    ['an unknown field', { burst: 10 }, 'burst', 'whitelistValidation'],
  ])('400 for %s, naming the field and the rule', async (_title, over, param, rule) => {
    const response = await create(valid(over as Record<string, unknown>));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(response.body.error.message).toContain(param);
    if (rule) expect(response.body.error.message).toContain(`rule: ${rule}`);
  });

  it('400 for conditions that could never match, naming the condition', async () => {
    const cases: [unknown, string, string][] = [
      [[{ key: 'workspace_id', value: other.id }], 'conditions[0].value', 'sameWorkspace'],
      [[{ key: 'workspace_id', value: 'no-such-workspace' }], 'conditions[0].value', 'workspaceExists'],
      [
        [{ key: 'organisation_id', value: '6a1c1c3e-0000-4000-8000-000000000000' }],
        'conditions[0].value',
        'sameOrganisation',
      ],
      [[{ key: 'api_key', value: otherKey.id }], 'conditions[0].value', 'apiKeyExists'],
      [[{ key: 'api_key', value: 'not-a-key' }], 'conditions[0].value', 'apiKeyExists'],
      [
        [
          { key: 'metadata.team', value: 'a' },
          { key: 'metadata.team', value: 'b' },
        ],
        'conditions[1].key',
        'unique',
      ],
    ];
    for (const [conditions, param, rule] of cases) {
      const response = await create(valid({ conditions }));
      expect({ conditions, status: response.status, param: response.body.error?.param }).toEqual({
        conditions,
        status: 400,
        param,
      });
      expect(response.body.error.message).toContain(`rule: ${rule}`);
    }
    const duplicateGroup = await create(valid({ group_by: [{ key: 'api_key' }, { key: 'api_key' }] }));
    expect(duplicateGroup.body.error).toMatchObject({ param: 'group_by[1].key' });
    // An API key of the policy's workspace is a fine condition.
    expect((await create(valid({ conditions: [{ key: 'api_key', value: workspaceKey.id }] }))).status).toBe(
      200,
    );
  });

  it('403 when organisation_id names another organisation; 404 for a workspace the caller cannot see', async () => {
    const foreign = await create(valid({ organisation_id: '6a1c1c3e-0000-4000-8000-000000000000' }));
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ type: 'permission_error', param: 'organisation_id' });
    expect((await create(valid({ organisation_id: organisationId }))).status).toBe(200);
    const notVisible = await create(valid(), otherKey.key);
    expect(notVisible.status).toBe(404);
  });

  it('401 without a key, with the error envelope', async () => {
    const response = await t.request('POST', '/v1/policies/rate-limits', { key: null, body: valid() });
    expect(response.status).toBe(401);
    expect(response.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
  });

  it('403 for a key without policies.create', async () => {
    const reader = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'reader', workspace_id: workspace.id, scopes: ['policies.list', 'policies.read'] },
    });
    const response = await create(valid(), reader.body.key);
    expect(response.status).toBe(403);
    expect(response.body.error.type).toBe('permission_error');
    expect((await t.request('GET', '/v1/policies/rate-limits', { key: reader.body.key })).status).toBe(200);
  });

  describe('list', () => {
    let ids: Record<string, string>;
    beforeAll(async () => {
      const make = async (name: string, over: Record<string, unknown>, workspaceId = workspace.id) =>
        (
          await create(
            valid({
              name,
              workspace_id: workspaceId,
              conditions: [{ key: 'workspace_id', value: workspaceId }],
              ...over,
            }),
          )
        ).body.id as string;
      ids = {
        tokensRph: await make('list tokens rph', { type: 'tokens', unit: 'rph', value: 10000 }),
        requestsRpd: await make('list requests rpd', { unit: 'rpd', value: 5000 }),
        inOther: await make('list other workspace', {}, other.id),
        archived: await make('list archived', { unit: 'rph' }),
      };
      expect((await t.request('DELETE', `/v1/policies/rate-limits/${ids.archived}`)).status).toBe(200);
    });

    it('answers the list envelope, active policies by default', async () => {
      const response = await t.request('GET', '/v1/policies/rate-limits?page_size=100');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ object: 'list', total: expect.any(Number), data: expect.any(Array) });
      expect(response.body.total).toBe(response.body.data.length);
      const listed = response.body.data.map((policy: { id: string }) => policy.id);
      expect(listed).toEqual(expect.arrayContaining([ids.tokensRph, ids.requestsRpd, ids.inOther]));
      expect(listed).not.toContain(ids.archived);
      for (const policy of response.body.data) expect(policy.status).toBe('active');
    });

    it('filters by workspace (id or slug), status, type and unit', async () => {
      const names = async (query: string) =>
        (await t.request('GET', `/v1/policies/rate-limits?${query}`)).body.data.map(
          (policy: { name: string }) => policy.name,
        );
      expect(await names(`workspace_id=${other.slug}`)).toEqual(['list other workspace']);
      expect(await names(`workspace_id=${other.id}`)).toEqual(['list other workspace']);
      expect(await names('status=archived')).toEqual(['list archived']);
      expect(await names('type=tokens')).toEqual(['list tokens rph']);
      expect(await names(`unit=rpd&workspace_id=${workspace.id}`)).toEqual(['list requests rpd']);
    });

    it('pages with page_size and current_page (both >= 0)', async () => {
      const all = (await t.request('GET', '/v1/policies/rate-limits?page_size=100')).body;
      const first = (await t.request('GET', '/v1/policies/rate-limits?page_size=2&current_page=0')).body;
      const second = (await t.request('GET', '/v1/policies/rate-limits?page_size=2&current_page=1')).body;
      expect(first.total).toBe(all.total);
      expect([...first.data, ...second.data].map((p: { id: string }) => p.id)).toEqual(
        all.data.slice(0, 4).map((p: { id: string }) => p.id),
      );
      for (const query of [
        'page_size=-1',
        'current_page=-1',
        'status=deleted',
        'type=cost',
        'unit=rps',
        'current_page=x',
      ]) {
        const response = await t.request('GET', `/v1/policies/rate-limits?${query}`);
        expect({ query, status: response.status }).toEqual({ query, status: 400 });
      }
    });

    it("a workspace key lists only its workspace's policies, and 404s another workspace's filter", async () => {
      const response = await t.request('GET', '/v1/policies/rate-limits?page_size=100', {
        key: otherKey.key,
      });
      expect(response.body.data.map((policy: { name: string }) => policy.name)).toEqual([
        'list other workspace',
      ]);
      expect(
        (
          await t.request('GET', `/v1/policies/rate-limits?workspace_id=${workspace.id}`, {
            key: otherKey.key,
          })
        ).status,
      ).toBe(404);
    });
  });

  describe('get, update, delete', () => {
    it('updates name, unit and value; other fields are refused', async () => {
      const id = (await create(valid({ name: 'to update' }))).body.id;
      const updated = await t.request('PUT', `/v1/policies/rate-limits/${id}`, {
        body: { value: 200, unit: 'rph' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({});
      const read = await t.request('GET', `/v1/policies/rate-limits/${id}`);
      expect(read.body).toMatchObject({ name: 'to update', value: 200, unit: 'rph', type: 'requests' });
      expect(Date.parse(read.body.last_updated_at)).toBeGreaterThanOrEqual(Date.parse(read.body.created_at));
      for (const body of [{ type: 'tokens' }, { value: -1 }, { unit: 'rps' }, { conditions: [] }]) {
        const response = await t.request('PUT', `/v1/policies/rate-limits/${id}`, { body });
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
      }
    });

    it('DELETE archives: gone from the default view, readable with status=archived, not updatable', async () => {
      const id = (await create(valid({ name: 'to archive' }))).body.id;
      const deleted = await t.request('DELETE', `/v1/policies/rate-limits/${id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({});
      expect((await t.request('GET', `/v1/policies/rate-limits/${id}`)).status).toBe(404);
      const archived = await t.request('GET', `/v1/policies/rate-limits/${id}?status=archived`);
      expect(archived.status).toBe(200);
      expect(archived.body.status).toBe('archived');
      expect((await t.request('PUT', `/v1/policies/rate-limits/${id}`, { body: { value: 1 } })).status).toBe(
        404,
      );
      expect((await t.request('DELETE', `/v1/policies/rate-limits/${id}`)).status).toBe(404);
    });

    it("404 for unknown ids, malformed ids, and another workspace's policy", async () => {
      const id = (await create(valid({ name: 'private' }))).body.id;
      for (const [path, key] of [
        ['/v1/policies/rate-limits/6a1c1c3e-0000-4000-8000-000000000000', undefined],
        ['/v1/policies/rate-limits/not-a-uuid', undefined],
        [`/v1/policies/rate-limits/${id}`, otherKey.key],
      ] as const) {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const response = await t.request(method, path, {
            key,
            body: method === 'PUT' ? { value: 5 } : undefined,
          });
          expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
          expect(response.body.error.code).toBe('policy_not_found');
        }
      }
    });

    it('creating, updating and archiving are in the audit trail', async () => {
      const id = (await create(valid({ name: 'audited' }))).body.id;
      await t.request('PUT', `/v1/policies/rate-limits/${id}`, { body: { value: 7 } });
      await t.request('DELETE', `/v1/policies/rate-limits/${id}`);
      const audit = await t.request('GET', '/v1/audit-logs?page_size=100&resource_type=rate_limits_policy');
      const methods = audit.body.data
        .filter((entry: { resource_id: string | null; method: string }) => entry.resource_id === id)
        .map((entry: { method: string }) => entry.method)
        .sort();
      expect(methods).toEqual(['DELETE', 'POST', 'PUT']);
    });
  });
});
