/**
 * Rate-limit and usage-limit policies enforced on real gateway traffic (issue 6, "Enforcement in
 * the gateway"; the PolicyEnforcer wiring described in docs/policies.md "The enforcement API").
 *
 * Where each expectation comes from:
 * - 429 `rate_limit_exceeded` (type `rate_limit_error`) with `Retry-After` in seconds and the
 *   rate headers; admitted requests carry `x-gateway-ratelimit-{limit,remaining,reset}-{requests,tokens}`
 *   for the tightest limit (docs/policies.md; issue 6: "headers giving the limit, the remainder
 *   and the reset").
 * - 412 `budget_exhausted` naming the policy (its name and id) once a budget is used up; raising
 *   `credit_limit` reactivates it at once (docs/policies.md "Exhausted, reactivated"; issue 6).
 * - Budget cost is the catalog price of the call (`catalogCost` = computeCost of
 *   libs/integrations), written to the policy entity's `current_usage` in batches
 *   (`GATEWAY_POLICY_FLUSH_MS`, here 100 ms).
 * - Token rate limits count the tokens the call used (issue 6).
 * - 200 concurrent requests against a limit of 50: exactly 50 pass (issue 6).
 * - An API key's own `rate_limits` are enforced as an inline policy whose refusal names the key
 *   (`api key '<name>' (<id>)`, the enforcer's message); archived policies are skipped at once.
 * - A refused request never reaches the provider.
 * Each test scopes its policies with a `metadata.test` condition of its own, sent in
 * `x-gateway-metadata`, so tests do not count against each other. Redis counters use a key
 * prefix of this suite, removed at the end.
 */
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { fetch } from 'undici';
import { computeCost, getModelPricing } from '../../libs/integrations/src';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { MockServer, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, itWithRedis, startTestApp } from '../support/test-app';

async function until<T>(read: () => Promise<T | undefined | false> | T | undefined | false, what: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not met in time: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describeE2E('gateway: policies on the request path', () => {
  let t: TestApp;
  let mock: MockServer;
  let workspaceId: string;
  let workspaceKey: string;
  const prefix = `sbtest:gwpolicies:${randomBytes(4).toString('hex')}:`;

  let sequence = 0;
  const scope = () => {
    const tag = `t${(sequence += 1)}-${Date.now().toString(36)}`;
    return { conditions: [{ key: 'metadata.test', value: tag }], metadata: { test: tag } };
  };

  async function call(metadata: Record<string, string>, key = workspaceKey, baseUrl = t.baseUrl) {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': key,
        'x-gateway-provider': 'openai',
        authorization: 'Bearer sk-upstream',
        'x-gateway-custom-host': `${mock.url}/v1`,
        'x-gateway-metadata': JSON.stringify(metadata),
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 1,
      }),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, headers: response.headers, body };
  }

  async function ratePolicy(body: Record<string, unknown>) {
    const response = await t.request('POST', '/v1/policies/rate-limits', {
      body: {
        group_by: [{ key: 'workspace_id' }],
        type: 'requests',
        unit: 'rpm',
        workspace_id: workspaceId,
        ...body,
        conditions: [{ key: 'workspace_id', value: workspaceId }, ...(body.conditions as unknown[])],
      },
    });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body.id as string;
  }

  async function budgetPolicy(body: Record<string, unknown>) {
    const response = await t.request('POST', '/v1/policies/usage-limits', {
      body: {
        group_by: [{ key: 'api_key' }],
        workspace_id: workspaceId,
        ...body,
        conditions: [{ key: 'workspace_id', value: workspaceId }, ...(body.conditions as unknown[])],
      },
    });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body.id as string;
  }

  async function updateBudget(id: string, body: Record<string, unknown>) {
    const response = await t.request('PUT', `/v1/policies/usage-limits/${id}`, { body });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
  }

  beforeAll(async () => {
    mock = await startOpenAIMock();
    t = await startTestApp(
      { GATEWAY_POLICY_REDIS_PREFIX: prefix, GATEWAY_POLICY_FLUSH_MS: '100' },
      undefined,
      { listen: true },
    );
    const workspace = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Policies W' } });
    expect(workspace.status).toBe(200);
    workspaceId = workspace.body.id;
    const key = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'policy traffic', workspace_id: workspaceId, scopes: WORKSPACE_SCOPES },
    });
    expect(key.status).toBe(200);
    workspaceKey = key.body.key;
  });

  afterAll(async () => {
    await t?.close();
    await mock?.close();
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  beforeEach(() => mock.reset());

  describe('rate limits', () => {
    it('3 requests a minute: three pass with the rate headers, the 4th is 429 with Retry-After', async () => {
      const { conditions, metadata } = scope();
      const id = await ratePolicy({ conditions, value: 3, name: 'three a minute' });
      const passed = [];
      for (let i = 0; i < 3; i += 1) passed.push(await call(metadata));
      expect(passed.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(passed.map((answer) => answer.headers.get('x-gateway-ratelimit-limit-requests'))).toEqual([
        '3',
        '3',
        '3',
      ]);
      expect(passed.map((answer) => answer.headers.get('x-gateway-ratelimit-remaining-requests'))).toEqual([
        '2',
        '1',
        '0',
      ]);
      for (const answer of passed) {
        const reset = Number(answer.headers.get('x-gateway-ratelimit-reset-requests'));
        expect(Number.isInteger(reset)).toBe(true);
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(61);
      }

      const refused = await call(metadata);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
      expect(refused.body.error.message).toContain(id);
      expect(refused.body.error.message).toContain("'three a minute'");
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(61);
      expect(refused.headers.get('x-gateway-ratelimit-limit-requests')).toBe('3');
      expect(refused.headers.get('x-gateway-ratelimit-remaining-requests')).toBe('0');
      expect(refused.headers.get('x-gateway-trace-id')).toBeTruthy();
      expect(mock.requests).toHaveLength(3);
    });

    it('200 concurrent requests against a limit of 50: exactly 50 pass, the others get 429', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, value: 50 });
      const answers = await Promise.all(Array.from({ length: 200 }, () => call(metadata)));
      const passed = answers.filter((answer) => answer.status === 200);
      const refused = answers.filter((answer) => answer.status === 429);
      expect({ passed: passed.length, refused: refused.length }).toEqual({ passed: 50, refused: 150 });
      expect(
        passed
          .map((answer) => Number(answer.headers.get('x-gateway-ratelimit-remaining-requests')))
          .sort((x, y) => x - y),
      ).toEqual(Array.from({ length: 50 }, (_v, index) => index));
      for (const answer of refused) {
        expect(answer.body.error.code).toBe('rate_limit_exceeded');
        expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      expect(mock.totalRequests).toBe(50);
    });

    // Two processes can share counters only through Redis; without it each process counts alone.
    itWithRedis(
      'two servers sharing Redis: 200 concurrent requests across both against 50, exactly 50 pass',
      async () => {
        const { conditions, metadata } = scope();
        await ratePolicy({ conditions, value: 50 });
        // Started after the policy exists: it loads the policy at start, and shares the counters.
        const second = await startTestApp(
          { GATEWAY_POLICY_REDIS_PREFIX: prefix, GATEWAY_POLICY_FLUSH_MS: '100' },
          t.database,
          { listen: true },
        );
        try {
          const answers = await Promise.all(
            Array.from({ length: 200 }, (_v, index) =>
              call(metadata, workspaceKey, index % 2 === 0 ? t.baseUrl : second.baseUrl),
            ),
          );
          const statuses = answers.map((answer) => answer.status);
          expect({
            passed: statuses.filter((status) => status === 200).length,
            refused: statuses.filter((status) => status === 429).length,
          }).toEqual({ passed: 50, refused: 150 });
          expect(mock.totalRequests).toBe(50);
        } finally {
          await second.close();
        }
      },
    );

    it('a token limit counts the tokens the calls used', async () => {
      const { conditions, metadata } = scope();
      await ratePolicy({ conditions, type: 'tokens', value: 50 });
      // 25 tokens a call: the first two fit (with any reasonable estimate), then 50 of 50 are used.
      mock.setReply({ inputTokens: 15, outputTokens: 10 });
      const first = await call(metadata);
      expect(first.status).toBe(200);
      expect(first.headers.get('x-gateway-ratelimit-limit-tokens')).toBe('50');
      // 25 used, 25 left: admitted (the remainder shown is after any estimate it reserved).
      const second = await call(metadata);
      expect(second.status).toBe(200);
      expect(second.headers.get('x-gateway-ratelimit-remaining-tokens')).toMatch(/^\d+$/);
      const remaining = Number(second.headers.get('x-gateway-ratelimit-remaining-tokens'));
      expect(remaining).toBeGreaterThanOrEqual(0);
      expect(remaining).toBeLessThanOrEqual(25);
      const third = await call(metadata);
      expect(third.status).toBe(429);
      expect(third.body.error.code).toBe('rate_limit_exceeded');
      expect(third.headers.get('x-gateway-ratelimit-remaining-tokens')).toBe('0');
      expect(mock.requests).toHaveLength(2);
    });

    it('an archived policy is skipped at once', async () => {
      const { conditions, metadata } = scope();
      const id = await ratePolicy({ conditions, value: 1 });
      expect((await call(metadata)).status).toBe(200);
      expect((await call(metadata)).status).toBe(429);
      expect((await t.request('DELETE', `/v1/policies/rate-limits/${id}`)).status).toBe(200);
      const after = await call(metadata);
      expect(after.status).toBe(200);
      expect(after.headers.get('x-gateway-ratelimit-limit-requests')).toBeNull();
      expect(mock.requests).toHaveLength(2);
    });

    it("an API key's own rate_limits are enforced for that key, and the refusal names it", async () => {
      const created = await t.request('POST', '/v1/api-keys/workspace/service', {
        body: {
          name: 'limited key',
          workspace_id: workspaceId,
          scopes: WORKSPACE_SCOPES,
          rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
        },
      });
      expect(created.status).toBe(200);
      const { metadata } = scope();
      const first = await call(metadata, created.body.key);
      expect(first.status).toBe(200);
      expect(first.headers.get('x-gateway-ratelimit-limit-requests')).toBe('2');
      expect((await call(metadata, created.body.key)).status).toBe(200);
      const refused = await call(metadata, created.body.key);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limit_exceeded');
      expect(refused.body.error.message).toContain(`api key 'limited key' (${created.body.id})`);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      // Another key of the workspace is not affected.
      expect((await call(metadata)).status).toBe(200);
      expect(mock.requests).toHaveLength(3);
    });
  });

  describe('usage limits (budgets)', () => {
    it('a token budget used up is refused with 412 naming the policy; raising credit_limit reactivates it at once', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, type: 'tokens', credit_limit: 40, name: 'forty tokens' });
      // 40 tokens a call: one call uses the whole budget.
      mock.setReply({ inputTokens: 20, outputTokens: 20 });
      expect((await call(metadata)).status).toBe(200);

      const exhausted = await call(metadata);
      expect(exhausted.status).toBe(412);
      expect(exhausted.body.error).toMatchObject({ code: 'budget_exhausted', type: 'budget_exceeded_error' });
      expect(exhausted.body.error.message).toContain(id);
      expect(exhausted.body.error.message).toContain("'forty tokens'");
      expect(exhausted.headers.get('retry-after')).toBeNull();
      expect(mock.requests).toHaveLength(1);

      await updateBudget(id, { credit_limit: 80 });
      expect((await call(metadata)).status).toBe(200);
      expect(mock.requests).toHaveLength(2);
      // 80 of 80 used: exhausted again.
      expect((await call(metadata)).status).toBe(412);
      expect(mock.requests).toHaveLength(2);
    });

    it('a cost budget counts the catalog price of each call; exhausted by a lower limit, reactivated by a higher one', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({
        conditions,
        type: 'cost',
        credit_limit: 1,
        group_by: [{ key: 'workspace_id' }],
        name: 'one dollar',
      });
      mock.setReply({ inputTokens: 1000, outputTokens: 500 });
      expect((await call(metadata)).status).toBe(200);
      const price = computeCost(getModelPricing('openai', 'gpt-4o-mini'), {
        promptTokens: 1000,
        completionTokens: 500,
      })!.amount;
      expect(price).toBeGreaterThan(0);
      const entity = await until(async () => {
        const listed = await t.request('GET', `/v1/policies/usage-limits/${id}/entities`);
        expect(listed.status).toBe(200);
        const [row] = listed.body.data;
        return row && row.current_usage > 0 ? row : undefined;
      }, 'the budget usage to be written');
      expect(entity.value_key).toBe(`workspace_id:${workspaceId}`);
      expect(entity.current_usage).toBeCloseTo(price, 8);

      // A limit below what was spent: exhausted, refused before the provider.
      await updateBudget(id, { credit_limit: price / 2 });
      const refused = await call(metadata);
      expect(refused.status).toBe(412);
      expect(refused.body.error.code).toBe('budget_exhausted');
      expect(refused.body.error.message).toContain("'one dollar'");
      expect(mock.requests).toHaveLength(1);
      await updateBudget(id, { credit_limit: 1 });
      expect((await call(metadata)).status).toBe(200);
      expect(mock.requests).toHaveLength(2);
    });

    it('an archived budget is skipped', async () => {
      const { conditions, metadata } = scope();
      const id = await budgetPolicy({ conditions, type: 'tokens', credit_limit: 40 });
      mock.setReply({ inputTokens: 20, outputTokens: 20 });
      expect((await call(metadata)).status).toBe(200);
      expect((await call(metadata)).status).toBe(412);
      expect((await t.request('DELETE', `/v1/policies/usage-limits/${id}`)).status).toBe(200);
      expect((await call(metadata)).status).toBe(200);
      expect(mock.requests).toHaveLength(2);
    });
  });
});
