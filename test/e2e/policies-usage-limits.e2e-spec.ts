import Redis from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PolicyEnforcer } from '@switchboard/policies';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

const DAY_MS = 86_400_000;

/** Usage limits policies (budgets) over HTTP: create, list, get with usage, update, archive, entities. */
describeE2E('policies: usage limits', () => {
  let t: TestApp;
  let organisationId: string;
  let workspace: { id: string; slug: string };
  let other: { id: string; slug: string };
  let otherKey: string;
  const prefix = `sbtest:usage:${randomBytes(4).toString('hex')}:`;

  const valid = (over: Record<string, unknown> = {}) => ({
    name: 'Monthly cost limit per API key',
    conditions: [{ key: 'workspace_id', value: workspace.id }],
    group_by: [{ key: 'api_key' }],
    type: 'cost',
    credit_limit: 1000,
    alert_threshold: 800,
    periodic_reset: 'monthly',
    workspace_id: workspace.id,
    ...over,
  });
  const create = (body: unknown, key?: string) =>
    t.request('POST', '/v1/policies/usage-limits', { body, key });
  const get = (id: string, query = '') => t.request('GET', `/v1/policies/usage-limits/${id}${query}`);

  /** Spends through the enforcer, as the gateway will: one settled request per call. */
  async function spend(apiKeyId: string, tokens: number, metadata: Record<string, string> = {}) {
    const enforcer = t.app.get(PolicyEnforcer);
    const reservation = await enforcer.check({
      organisationId,
      workspaceId: workspace.id,
      apiKeyId,
      userId: null,
      metadata,
    });
    await enforcer.settle(reservation, { tokens, cost: tokens / 1000 });
  }

  beforeAll(async () => {
    t = await startTestApp({ GATEWAY_POLICY_REDIS_PREFIX: prefix });
    [{ id: organisationId }] = await t.app.get(DataSource).query('SELECT id FROM organisations');
    workspace = (
      await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Usage W', slug: 'usage-w' } })
    ).body;
    other = (
      await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Usage W2', slug: 'usage-w2' } })
    ).body;
    otherKey = (
      await t.request('POST', '/v1/api-keys/workspace/service', {
        body: {
          name: 'W2 key',
          workspace_id: other.id,
          scopes: ['policies.list', 'policies.read', 'policies.update'],
        },
      })
    ).body.key;
  });
  afterAll(async () => {
    await t?.close();
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('creates a budget and reads it back with every field', async () => {
    const created = await create(valid());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), object: 'policy_usage_limits' });
    const read = await get(created.body.id);
    const now = new Date();
    expect(read.body).toEqual({
      object: 'policy_usage_limits',
      id: created.body.id,
      name: 'Monthly cost limit per API key',
      conditions: [{ key: 'workspace_id', value: workspace.id }],
      group_by: [{ key: 'api_key' }],
      type: 'cost',
      credit_limit: 1000,
      alert_threshold: 800,
      periodic_reset: 'monthly',
      periodic_reset_days: null,
      next_usage_reset_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      last_reset_at: null,
      status: 'active',
      workspace_id: workspace.id,
      organisation_id: organisationId,
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
    });
  });

  it('schedules resets: weekly on the next Monday, every n days from now or from next_usage_reset_at, none when cumulative', async () => {
    const weekly = (await get((await create(valid({ periodic_reset: 'weekly' }))).body.id)).body;
    const next = new Date(weekly.next_usage_reset_at);
    expect(next.getUTCDay()).toBe(1);
    expect(next.getUTCHours() + next.getUTCMinutes()).toBe(0);
    expect(next.getTime() - Date.now()).toBeGreaterThan(0);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * DAY_MS);

    const before = Date.now();
    const days = (
      await get((await create(valid({ periodic_reset: undefined, periodic_reset_days: 30 }))).body.id)
    ).body;
    expect(days).toMatchObject({ periodic_reset: null, periodic_reset_days: 30 });
    expect(Date.parse(days.next_usage_reset_at) - before).toBeGreaterThanOrEqual(30 * DAY_MS);
    expect(Date.parse(days.next_usage_reset_at) - Date.now()).toBeLessThanOrEqual(30 * DAY_MS);

    const first = new Date(Date.now() + 3 * DAY_MS).toISOString();
    const anchored = (
      await get(
        (
          await create(
            valid({ periodic_reset: undefined, periodic_reset_days: 7, next_usage_reset_at: first }),
          )
        ).body.id,
      )
    ).body;
    expect(anchored.next_usage_reset_at).toBe(first);

    const cumulative = (
      await get(
        (await create(valid({ periodic_reset: undefined, type: 'tokens', alert_threshold: null }))).body.id,
      )
    ).body;
    expect(cumulative).toMatchObject({
      periodic_reset: null,
      periodic_reset_days: null,
      next_usage_reset_at: null,
      alert_threshold: null,
      type: 'tokens',
    });
  });

  it.each([
    ['an unknown type', { type: 'requests' }, 'type', 'isIn'],
    ['no credit_limit', { credit_limit: undefined }, 'credit_limit', ''],
    ['a negative credit_limit', { credit_limit: -1 }, 'credit_limit', 'min'],
    ['a negative alert_threshold', { alert_threshold: -1 }, 'alert_threshold', 'min'],
    [
      'alert_threshold at the credit limit',
      { alert_threshold: 1000 },
      'alert_threshold',
      'lessThanCreditLimit',
    ],
    ['an unknown periodic_reset', { periodic_reset: 'daily' }, 'periodic_reset', 'isIn'],
    [
      'periodic_reset_days of 0',
      { periodic_reset: undefined, periodic_reset_days: 0 },
      'periodic_reset_days',
      'min',
    ],
    [
      'periodic_reset_days of 366',
      { periodic_reset: undefined, periodic_reset_days: 366 },
      'periodic_reset_days',
      'max',
    ],
    [
      'fractional periodic_reset_days',
      { periodic_reset: undefined, periodic_reset_days: 1.5 },
      'periodic_reset_days',
      'isInt',
    ],
    [
      'both periodic_reset and periodic_reset_days',
      { periodic_reset_days: 30 },
      'periodic_reset_days',
      'exclusiveWithPeriodicReset',
    ],
    [
      'next_usage_reset_at without a period',
      { periodic_reset: undefined, next_usage_reset_at: new Date(Date.now() + DAY_MS).toISOString() },
      'next_usage_reset_at',
      'requiresPeriod',
    ],
    [
      'next_usage_reset_at in the past',
      { next_usage_reset_at: '2020-01-01T00:00:00.000Z' },
      'next_usage_reset_at',
      'future',
    ],
    [
      'next_usage_reset_at that is not a date',
      { next_usage_reset_at: 'tomorrow' },
      'next_usage_reset_at',
      'isDateString',
    ],
    ['no conditions', { conditions: [] }, 'conditions', 'arrayMinSize'],
    ['no group_by', { group_by: [] }, 'group_by', 'arrayMinSize'],
    ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name', 'maxLength'],
  ])('400 for %s, naming the field and the rule', async (_title, over, param, rule) => {
    const response = await create(valid(over as Record<string, unknown>));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    if (rule) expect(response.body.error.message).toContain(`rule: ${rule}`);
  });

  it('lists with the envelope and filters by workspace, status and type', async () => {
    const tokensInOther = (
      await create(
        valid({
          name: 'other tokens',
          type: 'tokens',
          workspace_id: other.id,
          conditions: [{ key: 'workspace_id', value: other.slug }],
        }),
      )
    ).body.id;
    const archived = (
      await create(
        valid({
          name: 'archived one',
          workspace_id: other.id,
          conditions: [{ key: 'workspace_id', value: other.id }],
        }),
      )
    ).body.id;
    expect((await t.request('DELETE', `/v1/policies/usage-limits/${archived}`)).status).toBe(200);
    const ids = async (query: string, key?: string) =>
      (await t.request('GET', `/v1/policies/usage-limits?${query}`, { key })).body.data.map(
        (p: { id: string }) => p.id,
      );
    expect(await ids(`workspace_id=${other.slug}`)).toEqual([tokensInOther]);
    expect(await ids(`workspace_id=${other.id}&status=archived`)).toEqual([archived]);
    expect(await ids(`workspace_id=${other.id}&type=cost`)).toEqual([]);
    expect(await ids('page_size=100', otherKey)).toEqual([tokensInOther]);
    const all = (await t.request('GET', '/v1/policies/usage-limits?page_size=2&current_page=0')).body;
    expect(all).toMatchObject({ object: 'list', data: expect.any(Array) });
    expect(all.data).toHaveLength(2);
    expect(all.total).toBeGreaterThan(2);
    for (const query of ['type=requests', 'status=gone', 'page_size=-1', 'current_page=-2']) {
      expect((await t.request('GET', `/v1/policies/usage-limits?${query}`)).status).toBe(400);
    }
  });

  it('updates the limit, threshold, name and schedule; checks them together', async () => {
    const id = (await create(valid({ name: 'to update' }))).body.id;
    const put = (body: unknown) => t.request('PUT', `/v1/policies/usage-limits/${id}`, { body });
    expect((await put({ credit_limit: 2000, alert_threshold: 1500, name: 'renamed' })).body).toEqual({});
    expect((await get(id)).body).toMatchObject({
      credit_limit: 2000,
      alert_threshold: 1500,
      name: 'renamed',
    });
    expect((await put({ credit_limit: 1500 })).body.error).toMatchObject({ param: 'alert_threshold' });
    expect((await put({ alert_threshold: null })).status).toBe(200);
    expect((await get(id)).body.alert_threshold).toBeNull();
    // Setting periodic_reset_days replaces periodic_reset, and the other way round.
    expect((await put({ periodic_reset_days: 10 })).status).toBe(200);
    const days = (await get(id)).body;
    expect(days).toMatchObject({ periodic_reset: null, periodic_reset_days: 10 });
    expect((await put({ periodic_reset: 'weekly' })).status).toBe(200);
    expect((await get(id)).body).toMatchObject({ periodic_reset: 'weekly', periodic_reset_days: null });
    expect((await put({ periodic_reset: null })).status).toBe(200);
    expect((await get(id)).body).toMatchObject({ periodic_reset: null, next_usage_reset_at: null });
    expect((await put({ periodic_reset: 'weekly', periodic_reset_days: 3 })).body.error).toMatchObject({
      param: 'periodic_reset_days',
    });
    expect((await put({ type: 'tokens' })).body.error).toMatchObject({ param: 'type' });
    expect((await put({ credit_limit: -5 })).body.error).toMatchObject({ param: 'credit_limit' });
  });

  it('a schedule change moves the next reset of the entities already tracked', async () => {
    const id = (
      await create(
        valid({
          type: 'tokens',
          alert_threshold: null,
          periodic_reset: 'monthly',
          conditions: [{ key: 'metadata.case', value: 'schedule' }],
        }),
      )
    ).body.id;
    await spend(randomUUID(), 5, { case: 'schedule' });
    const next = new Date(Date.now() + 2 * DAY_MS).toISOString();
    expect(
      (
        await t.request('PUT', `/v1/policies/usage-limits/${id}`, {
          body: { periodic_reset_days: 2, next_usage_reset_at: next },
        })
      ).status,
    ).toBe(200);
    const entities = (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body;
    expect(
      entities.data.map((entity: { next_usage_reset_at: string }) => entity.next_usage_reset_at),
    ).toEqual([next]);
  });

  it('get with include_usage maps each value key to its usage and status', async () => {
    const id = (
      await create(
        valid({
          type: 'tokens',
          credit_limit: 10,
          alert_threshold: null,
          conditions: [{ key: 'metadata.case', value: 'usage-map' }],
        }),
      )
    ).body.id;
    const [a, b] = [randomUUID(), randomUUID()];
    await spend(a, 4, { case: 'usage-map' });
    await spend(b, 10, { case: 'usage-map' });
    const plain = (await get(id)).body;
    expect(plain.value_key_usage_map).toBeUndefined();
    const withUsage = (await get(id, '?include_usage=true')).body;
    expect(withUsage.value_key_usage_map).toEqual({
      [`api_key:${a}`]: {
        current_usage: 4,
        status: 'active',
        is_threshold_alerts_sent: false,
        is_exhausted_alerts_sent: false,
      },
      [`api_key:${b}`]: {
        current_usage: 10,
        status: 'exhausted',
        is_threshold_alerts_sent: false,
        is_exhausted_alerts_sent: expect.any(Boolean),
      },
    });
    expect((await get(id, '?include_usage=yes')).status).toBe(400);
  });

  it('lists entities (the API keys, workspaces and users tracked) with search, status and paging', async () => {
    const id = (
      await create(
        valid({
          type: 'tokens',
          credit_limit: 10,
          alert_threshold: null,
          periodic_reset: undefined,
          group_by: [{ key: 'api_key' }, { key: 'metadata._user' }],
          conditions: [{ key: 'metadata.case', value: 'entities' }],
        }),
      )
    ).body.id;
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    await spend(keys[0], 10, { case: 'entities', _user: 'alice' });
    await spend(keys[1], 3, { case: 'entities', _user: 'bob' });
    await spend(keys[2], 1, { case: 'entities' }); // no user: not grouped, not tracked
    const list = (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body;
    expect(list).toMatchObject({ object: 'list', total: 2 });
    expect(list.data[0]).toEqual({
      object: 'policy_usage_limits_entity',
      id: expect.any(String),
      value_key: `api_key:${keys[0]}|metadata._user:alice`,
      entities: [
        { type: 'api_key', id: keys[0] },
        { type: 'user', id: 'alice' },
      ],
      current_usage: 10,
      status: 'exhausted',
      is_threshold_alerts_sent: false,
      is_exhausted_alerts_sent: expect.any(Boolean),
      next_usage_reset_at: null,
      last_reset_at: null,
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
    });
    const values = async (query: string) =>
      (await t.request('GET', `/v1/policies/usage-limits/${id}/entities?${query}`)).body.data.map(
        (entity: { value_key: string }) => entity.value_key,
      );
    expect(await values('status=exhausted')).toEqual([`api_key:${keys[0]}|metadata._user:alice`]);
    expect(await values('status=active')).toEqual([`api_key:${keys[1]}|metadata._user:bob`]);
    expect(await values('search=bob')).toEqual([`api_key:${keys[1]}|metadata._user:bob`]);
    expect(await values('search=%25')).toEqual([]);
    expect(await values('page_size=1&current_page=1')).toEqual([`api_key:${keys[1]}|metadata._user:bob`]);
    expect((await t.request('GET', `/v1/policies/usage-limits/${id}/entities?status=archived`)).status).toBe(
      400,
    );
    // The user falls back to the calling user when the request does not name one.
    const enforcer = t.app.get(PolicyEnforcer);
    await enforcer.settle(
      await enforcer.check({
        organisationId,
        workspaceId: workspace.id,
        apiKeyId: keys[2],
        userId: 'user-7',
        metadata: { case: 'entities' },
      }),
      { tokens: 1 },
    );
    expect(await values('search=user-7')).toEqual([`api_key:${keys[2]}|metadata._user:user-7`]);
  });

  it("404 for unknown policies and entities, and for another workspace's policy", async () => {
    const id = (await create(valid({ name: 'private' }))).body.id;
    const unknown = '6a1c1c3e-0000-4000-8000-000000000000';
    for (const [method, path, key] of [
      ['GET', `/v1/policies/usage-limits/${unknown}`, undefined],
      ['GET', '/v1/policies/usage-limits/nope', undefined],
      ['PUT', `/v1/policies/usage-limits/${unknown}`, undefined],
      ['DELETE', `/v1/policies/usage-limits/${unknown}`, undefined],
      ['GET', `/v1/policies/usage-limits/${unknown}/entities`, undefined],
      ['PUT', `/v1/policies/usage-limits/${id}/entities/${unknown}/reset`, undefined],
      ['PUT', `/v1/policies/usage-limits/${id}/entities/api_key:nobody/reset`, undefined],
      ['GET', `/v1/policies/usage-limits/${id}`, otherKey],
      ['GET', `/v1/policies/usage-limits/${id}/entities`, otherKey],
      ['PUT', `/v1/policies/usage-limits/${id}`, otherKey],
    ] as const) {
      const response = await t.request(method, path, {
        key,
        body: method === 'PUT' && !path.endsWith('reset') ? { name: 'x' } : undefined,
      });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
      expect(response.body.error.code).toMatch(/^policy_(entity_)?not_found$/);
    }
  });

  it('DELETE archives; the archived budget is readable with status=archived and its entities stay listed', async () => {
    const id = (
      await create(
        valid({
          type: 'tokens',
          alert_threshold: null,
          conditions: [{ key: 'metadata.case', value: 'archive' }],
        }),
      )
    ).body.id;
    await spend(randomUUID(), 2, { case: 'archive' });
    expect((await t.request('DELETE', `/v1/policies/usage-limits/${id}`)).body).toEqual({});
    expect((await get(id)).status).toBe(404);
    expect((await get(id, '?status=archived')).body.status).toBe('archived');
    expect((await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.total).toBe(1);
  });
});
