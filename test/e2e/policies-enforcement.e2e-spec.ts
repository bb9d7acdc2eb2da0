import Redis from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AppError } from '@switchboard/common';
import { EnforcementContext, InlineLimits, PolicyEnforcer, Reservation } from '@switchboard/policies';
import { enforcementContexts } from '../support/policies';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

type Attempt = { ok: true; reservation: Reservation } | { ok: false; error: AppError };

/**
 * Enforcement through `PolicyEnforcer` (the gateway calls it per request; its wiring into the
 * request path comes separately): rate limits and budgets hold exactly under concurrency.
 */
describeE2E('policies: enforcement', () => {
  let t: TestApp;
  let organisationId: string;
  let workspace: { id: string };
  let other: { id: string };
  const prefix = `sbtest:enforce:${randomBytes(4).toString('hex')}:`;
  /** Data folders of apps this suite closed itself (restart tests), removed at the end. */
  const leftovers: string[] = [];

  const enforcer = () => t.app.get(PolicyEnforcer);
  const context = enforcementContexts(() => ({ organisationId, workspaceId: workspace.id }));
  const attempt = async (input: EnforcementContext): Promise<Attempt> => {
    try {
      return { ok: true, reservation: await enforcer().check(input) };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return { ok: false, error };
    }
  };
  const attemptMany = (count: number, input: () => EnforcementContext) =>
    Promise.all(Array.from({ length: count }, () => attempt(input())));
  const admitted = (attempts: Attempt[]) =>
    attempts.filter((a): a is Extract<Attempt, { ok: true }> => a.ok).map((a) => a.reservation);
  const refused = (attempts: Attempt[]) =>
    attempts.filter((a): a is Extract<Attempt, { ok: false }> => !a.ok).map((a) => a.error);

  async function ratePolicy(over: Record<string, unknown> = {}) {
    const response = await t.request('POST', '/v1/policies/rate-limits', {
      body: {
        conditions: [{ key: 'workspace_id', value: workspace.id }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 50,
        workspace_id: workspace.id,
        ...over,
      },
    });
    expect(response.status).toBe(200);
    return response.body.id as string;
  }

  async function budgetPolicy(over: Record<string, unknown> = {}) {
    const response = await t.request('POST', '/v1/policies/usage-limits', {
      body: {
        conditions: [{ key: 'workspace_id', value: workspace.id }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 50,
        workspace_id: workspace.id,
        ...over,
      },
    });
    expect(response.status).toBe(200);
    return response.body.id as string;
  }

  /** Each test scopes its policies with a metadata condition of its own, so they do not interfere. */
  let sequence = 0;
  const scope = () => {
    const tag = `t${(sequence += 1)}`;
    return { tag, conditions: [{ key: 'metadata.test', value: tag }], metadata: { test: tag } };
  };

  // No timer flush during the tests: the batching is observed, then forced.
  const env = { GATEWAY_POLICY_REDIS_PREFIX: prefix, GATEWAY_POLICY_FLUSH_MS: '60000' };

  beforeAll(async () => {
    t = await startTestApp(env);
    [{ id: organisationId }] = await t.app.get(DataSource).query('SELECT id FROM organisations');
    workspace = (await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Enforce W' } })).body;
    other = (await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Enforce W2' } })).body;
  });
  afterAll(async () => {
    // After a restart the app runs on a database it was handed, which its close() leaves alone.
    const database = t?.database;
    await t?.close();
    if (leftovers.length > 0) await database?.drop();
    for (const folder of leftovers) rmSync(folder, { recursive: true, force: true });
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it(`uses the ${process.env.REDIS_URL ? 'Redis' : 'in-process'} counter store`, () => {
    // Reaching into the provider is fine in a test: the store kind decides what the suite proves.
    const store = (enforcer() as unknown as { store: { kind: string } }).store;
    expect(store.kind).toBe(process.env.REDIS_URL ? 'redis' : 'memory');
  });

  describe('rate limits', () => {
    it('200 concurrent checks against a limit of 50 admit exactly 50; the rest get 429 with Retry-After', async () => {
      const { conditions, metadata } = scope();
      const id = await ratePolicy({ conditions, name: 'fifty a minute' });
      const apiKeyId = randomUUID();
      const attempts = await attemptMany(200, () => context({ apiKeyId, metadata }));
      const passed = admitted(attempts);
      expect(passed).toHaveLength(50);
      expect(
        passed.map((r) => Number(r.headers['x-gateway-ratelimit-remaining-requests'])).sort((a, b) => a - b),
      ).toEqual(Array.from({ length: 50 }, (_v, index) => index));
      for (const reservation of passed) {
        expect(reservation.headers['x-gateway-ratelimit-limit-requests']).toBe('50');
        expect(Number(reservation.headers['x-gateway-ratelimit-reset-requests'])).toBeGreaterThanOrEqual(60);
        expect(Number(reservation.headers['x-gateway-ratelimit-reset-requests'])).toBeLessThanOrEqual(61);
      }
      const errors = refused(attempts);
      expect(errors).toHaveLength(150);
      for (const error of errors) {
        expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'rate_limit_error' });
        expect(error.message).toContain(id);
        expect(error.message).toContain("'fifty a minute'");
        const retryAfter = Number(error.headers?.['retry-after']);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(61);
        expect(error.headers).toMatchObject({
          'x-gateway-ratelimit-limit-requests': '50',
          'x-gateway-ratelimit-remaining-requests': '0',
        });
      }
    });

    it('each group (here, each API key) has its own count', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 3 });
      const [first, second] = [randomUUID(), randomUUID()];
      const a = await attemptMany(5, () => context({ apiKeyId: first, metadata }));
      const b = await attemptMany(5, () => context({ apiKeyId: second, metadata }));
      expect([admitted(a).length, admitted(b).length]).toEqual([3, 3]);
    });

    it('groups by metadata; a request without the grouped field is not counted', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 2, group_by: [{ key: 'metadata.team' }] });
      const search = await attemptMany(4, () => context({ metadata: { ...metadata, team: 'search' } }));
      const ads = await attemptMany(4, () => context({ metadata: { ...metadata, team: 'ads' } }));
      const none = await attemptMany(4, () => context({ metadata }));
      expect([admitted(search).length, admitted(ads).length, admitted(none).length]).toEqual([2, 2, 4]);
    });

    it('applies only where its conditions match and inside its workspace; organisation-wide ones apply everywhere', async () => {
      const { tag, conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 1, group_by: [{ key: 'metadata.test' }] });
      const apiKeyId = randomUUID();
      expect(admitted(await attemptMany(3, () => context({ apiKeyId, metadata }))).length).toBe(1);
      expect(
        admitted(await attemptMany(3, () => context({ apiKeyId, metadata: { test: `${tag}-x` } }))).length,
      ).toBe(3);
      expect(
        admitted(await attemptMany(3, () => context({ apiKeyId, workspaceId: other.id, metadata }))).length,
      ).toBe(3);

      const wide = scope();
      await ratePolicy({
        conditions: [{ key: 'organisation_id', value: organisationId }, ...wide.conditions],
        workspace_id: undefined,
        value: 2,
        group_by: [{ key: 'organisation_id' }],
      });
      const inW = await attemptMany(2, () => context({ metadata: wide.metadata }));
      const inW2 = await attemptMany(2, () => context({ workspaceId: other.id, metadata: wide.metadata }));
      expect(admitted([...inW, ...inW2])).toHaveLength(2);
    });

    it('token limits count the tokens the call used, and a reservation can hold an estimate', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, type: 'tokens', value: 100 });
      const apiKeyId = randomUUID();
      const first = await enforcer().check(context({ apiKeyId, metadata }));
      expect(first.headers).toMatchObject({
        'x-gateway-ratelimit-limit-tokens': '100',
        'x-gateway-ratelimit-remaining-tokens': '100',
      });
      await enforcer().settle(first, { tokens: 60 });
      const second = await enforcer().check(context({ apiKeyId, metadata }));
      expect(second.headers['x-gateway-ratelimit-remaining-tokens']).toBe('40');
      await enforcer().settle(second, { tokens: 50 });
      const third = await attempt(context({ apiKeyId, metadata }));
      expect(third.ok).toBe(false);
      expect(!third.ok && third.error.status).toBe(429);

      // With an estimate: 30 reserved at once, so three concurrent calls of up to 40 tokens fit 2 in 100.
      const { conditions: c2, metadata: m2 } = scope();
      await ratePolicy({ conditions: c2, type: 'tokens', value: 100 });
      const estimated = await attemptMany(3, () =>
        context({ apiKeyId, metadata: m2, estimate: { tokens: 40 } }),
      );
      expect(admitted(estimated)).toHaveLength(2);
    });

    it('release gives the request back; settle does not', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 2 });
      const apiKeyId = randomUUID();
      const [a, b] = admitted(await attemptMany(2, () => context({ apiKeyId, metadata })));
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      await enforcer().release(a);
      await enforcer().release(a); // a second release (or settle) of one reservation does nothing
      const c = await attempt(context({ apiKeyId, metadata }));
      expect(c.ok).toBe(true);
      await enforcer().settle(b, { tokens: 10 });
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
    });

    it('a refusal by one policy counts nothing in the others', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 5, group_by: [{ key: 'metadata.test' }] });
      await ratePolicy({ conditions, value: 1, group_by: [{ key: 'api_key' }] });
      const blocked = randomUUID();
      expect(admitted(await attemptMany(4, () => context({ apiKeyId: blocked, metadata })))).toHaveLength(1);
      // The per-test limit of 5 was charged once, by the one admitted request.
      expect(admitted(await attemptMany(6, () => context({ metadata })))).toHaveLength(4);
    });

    it('changes apply at once: a raised value admits more, an archived policy is skipped', async () => {
      const { conditions, metadata } = scope();
      const id = await ratePolicy({ conditions, value: 2 });
      const apiKeyId = randomUUID();
      expect(admitted(await attemptMany(4, () => context({ apiKeyId, metadata })))).toHaveLength(2);
      expect((await t.request('PUT', `/v1/policies/rate-limits/${id}`, { body: { value: 3 } })).status).toBe(
        200,
      );
      expect(admitted(await attemptMany(4, () => context({ apiKeyId, metadata })))).toHaveLength(1);
      expect((await t.request('DELETE', `/v1/policies/rate-limits/${id}`)).status).toBe(200);
      const after = await attemptMany(10, () => context({ apiKeyId, metadata }));
      expect(admitted(after)).toHaveLength(10);
      expect(after.every((a) => a.ok && Object.keys(a.reservation.headers).length === 0)).toBe(true);
    });

    it('a request no policy applies to gets an empty reservation and no headers', async () => {
      const reservation = await enforcer().check(context({ metadata: { test: 'nothing-applies' } }));
      expect(reservation.headers).toEqual({});
      await enforcer().settle(reservation, { tokens: 5, cost: 1 });
    });
  });

  describe('inline limits of keys, workspaces and providers', () => {
    it('an API key rate limit applies to that key only, and the error names it', async () => {
      const apiKeyId = randomUUID();
      const inline: InlineLimits = {
        kind: 'api_key',
        id: apiKeyId,
        name: 'batch job key',
        rateLimits: [
          { type: 'requests', unit: 'rpm', value: 3 },
          { type: 'requests', unit: 'rpm', value: 5 },
        ],
      };
      const attempts = await attemptMany(6, () => context({ apiKeyId, inline: [inline] }));
      expect(admitted(attempts)).toHaveLength(3);
      expect(refused(attempts)[0].message).toBe(
        `The rate limit of api key 'batch job key' (${apiKeyId}) allows 3 requests per minute for api_key:${apiKeyId}; ` +
          `retry in ${refused(attempts)[0].headers?.['retry-after']} s`,
      );
      // The same limits on another key count separately.
      const otherKey = randomUUID();
      const elsewhere = await attemptMany(4, () =>
        context({ apiKeyId: otherKey, inline: [{ ...inline, id: otherKey }] }),
      );
      expect(admitted(elsewhere)).toHaveLength(3);
    });

    it('inline limits stack with policies: the tightest wins', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 10 });
      const providerId = randomUUID();
      const inline: InlineLimits[] = [
        { kind: 'workspace', id: workspace.id, rateLimits: [] },
        { kind: 'provider', id: providerId, rateLimits: [{ type: 'requests', unit: 'rph', value: 4 }] },
      ];
      const apiKeyId = randomUUID();
      expect(admitted(await attemptMany(8, () => context({ apiKeyId, metadata, inline })))).toHaveLength(4);
    });

    it('an inline budget (usage_limits) is persisted and refuses with 412 once exhausted', async () => {
      const apiKeyId = randomUUID();
      const inline: InlineLimits = {
        kind: 'api_key',
        id: apiKeyId,
        workspaceId: workspace.id,
        usageLimits: { credit_limit: 100, type: 'tokens', periodic_reset: 'monthly' },
      };
      const first = await enforcer().check(context({ apiKeyId, inline: [inline] }));
      await enforcer().settle(first, { tokens: 100 });
      const second = await attempt(context({ apiKeyId, inline: [inline] }));
      expect(second.ok).toBe(false);
      expect(!second.ok && second.error).toMatchObject({ status: 412, code: 'budget_exhausted' });
      expect(!second.ok && second.error.message).toMatch(
        new RegExp(
          `^The budget of api key ${apiKeyId} is exhausted for api_key:${apiKeyId}: 100 tokens of 100 tokens used; ` +
            'it resets at \\d{4}-\\d\\d-01T00:00:00.000Z$',
        ),
      );
      const rows = await t.app
        .get(DataSource)
        .query(
          `SELECT policy_key, reset_rule FROM usage_limit_counters WHERE value_key = 'api_key:${apiKeyId}'`,
        );
      expect(rows).toEqual([
        { policy_key: `inline:api_key:${apiKeyId}:tokens:monthly`, reset_rule: 'monthly' },
      ]);
    });
  });

  describe('budgets', () => {
    it('200 concurrent requests against a 50-token budget: exactly 50 pass, then 412 naming the policy', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, name: 'fifty tokens' });
      const apiKeyId = randomUUID();
      const attempts = await attemptMany(200, () => context({ apiKeyId, metadata, estimate: { tokens: 1 } }));
      const passed = admitted(attempts);
      expect(passed).toHaveLength(50);
      for (const error of refused(attempts)) {
        expect(error).toMatchObject({
          status: 412,
          code: 'budget_insufficient',
          type: 'budget_exceeded_error',
        });
        expect(error.message).toContain(id);
      }
      await Promise.all(passed.map((reservation) => enforcer().settle(reservation, { tokens: 1 })));
      const after = await attempt(context({ apiKeyId, metadata, estimate: { tokens: 1 } }));
      expect(after.ok).toBe(false);
      const error = !after.ok ? after.error : null;
      expect(error).toMatchObject({ status: 412, code: 'budget_exhausted' });
      expect(error?.message).toBe(
        `Usage limit policy 'fifty tokens' (${id}) is exhausted for api_key:${apiKeyId}: 50 tokens of 50 tokens used; it does not reset by itself`,
      );
      expect(error?.headers?.['retry-after']).toBeUndefined();
    });

    it('cost budgets reserve the estimate, settle the actual, and never overshoot the credit limit', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({
        conditions,
        type: 'cost',
        credit_limit: 0.5,
        group_by: [{ key: 'workspace_id' }],
      });
      const attempts = await attemptMany(200, () => context({ metadata, estimate: { cost: 0.01 } }));
      const passed = admitted(attempts);
      expect(passed).toHaveLength(50);
      // Each call cost a bit less than its upper bound: the room left admits a few more, never more than fits.
      await Promise.all(passed.map((reservation) => enforcer().settle(reservation, { cost: 0.009 })));
      const more = admitted(await attemptMany(20, () => context({ metadata, estimate: { cost: 0.01 } })));
      expect(more).toHaveLength(5);
      await Promise.all(more.map((reservation) => enforcer().settle(reservation, { cost: 0.01 })));
      const entities = await t.request('GET', `/v1/policies/usage-limits/${id}/entities`);
      expect(entities.body.data).toHaveLength(1);
      expect(entities.body.data[0].current_usage).toBeCloseTo(0.5, 10);
      expect(entities.body.data[0].current_usage).toBeLessThanOrEqual(0.5 + 1e-12);
      expect(entities.body.data[0]).toMatchObject({
        value_key: `workspace_id:${workspace.id}`,
        status: 'exhausted',
        entities: [{ type: 'workspace', id: workspace.id }],
      });
    });

    it('cost comes from what the gateway reports; an unknown cost counts nothing', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, type: 'cost', credit_limit: 1 });
      const apiKeyId = randomUUID();
      const a = await enforcer().check(context({ apiKeyId, metadata }));
      await enforcer().settle(a, { tokens: 1000, cost: 0.25 });
      const b = await enforcer().check(context({ apiKeyId, metadata }));
      await enforcer().settle(b, { tokens: 1000, cost: null });
      const entity = (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.data[0];
      expect(entity.current_usage).toBeCloseTo(0.25, 10);
      expect(entity.status).toBe('active');
    });

    it('raising the credit limit reactivates an exhausted entity at once; lowering it exhausts', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, credit_limit: 10 });
      const apiKeyId = randomUUID();
      await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 10 });
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      expect(
        (await t.request('PUT', `/v1/policies/usage-limits/${id}`, { body: { credit_limit: 12 } })).status,
      ).toBe(200);
      const reactivated = await attempt(context({ apiKeyId, metadata }));
      expect(reactivated.ok).toBe(true);
      if (reactivated.ok) await enforcer().release(reactivated.reservation);
      const listed = await t.request('GET', `/v1/policies/usage-limits/${id}/entities?status=active`);
      expect(listed.body.data.map((entity: { value_key: string }) => entity.value_key)).toEqual([
        `api_key:${apiKeyId}`,
      ]);
      expect(
        (await t.request('PUT', `/v1/policies/usage-limits/${id}`, { body: { credit_limit: 5 } })).status,
      ).toBe(200);
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      const exhausted = await t.request('GET', `/v1/policies/usage-limits/${id}/entities?status=exhausted`);
      expect(exhausted.body.total).toBe(1);
    });

    it('resetting an entity by hand lets it spend again at once', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, credit_limit: 5 });
      const apiKeyId = randomUUID();
      await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 5 });
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      const entity = (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.data[0];
      const reset = await t.request('PUT', `/v1/policies/usage-limits/${id}/entities/${entity.id}/reset`);
      expect(reset.status).toBe(200);
      expect(reset.body).toEqual({});
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(true);
      const after = (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.data[0];
      expect(after).toMatchObject({ id: entity.id, current_usage: 0, status: 'active' });
      expect(after.last_reset_at).not.toBeNull();
      // And through the policy update's reset_usage_for_value.
      await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 5 });
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      const byValue = await t.request('PUT', `/v1/policies/usage-limits/${id}`, {
        body: { reset_usage_for_value: `api_key:${apiKeyId}` },
      });
      expect(byValue.status).toBe(200);
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(true);
    });

    it('an archived budget is skipped', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, credit_limit: 1 });
      const apiKeyId = randomUUID();
      await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 1 });
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      await t.request('DELETE', `/v1/policies/usage-limits/${id}`);
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(true);
    });

    it('a budget whose period ends resets on the first request after the boundary, before any job runs', async () => {
      const { conditions, metadata } = scope();
      const boundary = new Date(Date.now() + 1500);
      const id = await budgetPolicy({
        conditions,
        credit_limit: 2,
        periodic_reset_days: 1,
        next_usage_reset_at: boundary.toISOString(),
      });
      const apiKeyId = randomUUID();
      await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 2 });
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, boundary.getTime() - Date.now() + 50));
      expect((await attempt(context({ apiKeyId, metadata }))).ok).toBe(true);
      const entity = (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.data[0];
      expect(entity.current_usage).toBe(0);
      expect(Date.parse(entity.next_usage_reset_at)).toBe(boundary.getTime() + 86_400_000);
    });

    it('usage is written in batches, not per request, and nothing is lost at shutdown', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, credit_limit: 30 });
      const apiKeyId = randomUUID();
      for (let index = 0; index < 3; index++)
        await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 10 });
      const persisted = async () =>
        (
          await t.app
            .get(DataSource)
            .query(`SELECT current_usage, status FROM usage_limit_counters WHERE policy_key = '${id}'`)
        ).map((row: { current_usage: string | number; status: string }) => ({
          usage: Number(row.current_usage),
          status: row.status,
        }));
      // The flush timer is a minute here: three settlements, no usage written yet.
      expect((await persisted()).map((row: { usage: number }) => row.usage)).toEqual([0]);

      // Shut down and start again on the same database: the shutdown wrote the usage.
      const database = t.database;
      leftovers.push(t.config.dataDir);
      await t.app.close();
      t = await startTestApp(env, database);
      expect(await persisted()).toEqual([{ usage: 30, status: 'exhausted' }]);
      const after = await attempt(context({ apiKeyId, metadata }));
      expect(!after.ok && after.error.code).toBe('budget_exhausted');
    });

    it('usage the database cannot take at shutdown goes to a spill file and is replayed at the next start', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, credit_limit: 100 });
      const apiKeyId = randomUUID();
      await enforcer().settle(await enforcer().check(context({ apiKeyId, metadata })), { tokens: 42 });
      const database = t.database;
      const dataDir = t.config.dataDir;
      leftovers.push(dataDir);
      // The database goes away first: the shutdown cannot write the pending usage.
      await t.app.get(DataSource).destroy();
      await t.app.close();
      const spilled = readdirSync(join(dataDir, 'policy-spill'));
      expect(spilled).toHaveLength(1);
      t = await startTestApp({ GATEWAY_DATA_DIR: dataDir }, database);
      const [row] = await t.app
        .get(DataSource)
        .query(`SELECT current_usage FROM usage_limit_counters WHERE policy_key = '${id}'`);
      expect(Number(row.current_usage)).toBe(42);
      expect(readdirSync(join(dataDir, 'policy-spill'))).toEqual([]);
    });
  });
});
