/**
 * The `status` of API keys, providers and virtual keys follows their inline budgets (issue 6:
 * inline `usage_limits` are enforced as policies; a used-up one shows as `exhausted`).
 *
 * Where each expectation comes from:
 * - A used-up inline budget refuses calls with 412 `budget_exhausted` naming the owner (the
 *   enforcer's message, as test/e2e/policies-enforcement); authentication itself still passes,
 *   so never 401.
 * - GET of the owner (single and list) says `exhausted` while the budget's usage in its current
 *   period has reached the limit the owner declares now; `active` again once the limit is raised
 *   (PUT) or the period is reset by the budget-reset job, with no other step; a provider's or
 *   virtual key's `reset_usage: true` resets it (docs/integrations.md: exhausted → active).
 * - An expired key says `expired`, whatever its budget.
 * The mock upstream answers every chat call with 12 + 6 = 18 tokens of usage; the calls send no
 * `max_tokens`, so a token budget admits while any room is left, and 30 tokens are used up by the
 * second call. Redis counters use a key prefix of this suite, removed at the end.
 */
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { fetch } from 'undici';
import { ApiKeysService } from '../../libs/api-keys/src';
import { BudgetResetJob } from '../../libs/policies/src';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { MockServer, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

const DAY_MS = 86_400_000;

describeE2E('policies: inline budgets in the status of keys and providers', () => {
  let t: TestApp;
  let mock: MockServer;
  let workspaceId: string;
  let workspaceKey: string;
  const prefix = `sbtest:inlinestatus:${randomBytes(4).toString('hex')}:`;

  async function admin(method: string, url: string, body?: unknown) {
    const response = await t.request(method, url, { body });
    expect({ url, status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body;
  }

  async function chat(key: string, headers: Record<string, string>) {
    const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, body };
  }

  /** Straight to the mock, no stored provider: only the key's own limits apply. */
  let direct: Record<string, string>;

  /**
   * Calls until one is refused (settlement may trail a response, so the exact count may vary by
   * one); the refusal must be the budget's, after at least one call passed.
   */
  async function useUp(key: string, headers: Record<string, string>) {
    const passed: number[] = [];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const answer = await chat(key, headers);
      if (answer.status === 200) {
        passed.push(attempt);
        continue;
      }
      expect(passed.length).toBeGreaterThanOrEqual(1);
      return answer;
    }
    throw new Error('the budget was never used up');
  }

  async function workspaceServiceKey(body: Record<string, unknown>) {
    return admin('POST', '/v1/api-keys/workspace/service', {
      workspace_id: workspaceId,
      scopes: WORKSPACE_SCOPES,
      ...body,
    }) as Promise<{ id: string; key: string }>;
  }

  const keyStatus = async (id: string) => (await admin('GET', `/v1/api-keys/${id}`)).status as string;
  const listedKeyStatuses = async () => {
    const listed = await admin('GET', `/v1/api-keys?workspace_id=${workspaceId}&page_size=100`);
    return new Map<string, string>(
      listed.data.map((key: { id: string; status: string }) => [key.id, key.status]),
    );
  };

  beforeAll(async () => {
    mock = await startOpenAIMock();
    direct = {
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-upstream',
      'x-gateway-custom-host': `${mock.url}/v1`,
    };
    t = await startTestApp({ GATEWAY_POLICY_REDIS_PREFIX: prefix }, undefined, { listen: true });
    workspaceId = (await admin('POST', '/v1/admin/workspaces', { name: 'Inline status W' })).id;
    workspaceKey = (await workspaceServiceKey({ name: 'unlimited traffic' })).key;
    await admin('POST', '/v1/integrations', {
      name: 'OpenAI through the mock',
      slug: 'openai-mock',
      ai_provider_id: 'openai',
      key: 'sk-integration-inline-status-0123456789',
      configurations: { custom_host: `${mock.url}/v1` },
    });
    await admin('PUT', '/v1/integrations/openai-mock/workspaces', {
      workspaces: [{ id: workspaceId, enabled: true }],
    });
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

  describe('API keys', () => {
    it('a key whose token budget is used up is refused with 412 and reads exhausted; raising the limit makes it active and lets calls pass', async () => {
      const limited = await workspaceServiceKey({
        name: 'thirty tokens',
        usage_limits: { credit_limit: 30, type: 'tokens' },
      });
      const bystander = await workspaceServiceKey({
        name: 'roomy budget',
        usage_limits: { credit_limit: 1_000_000, type: 'tokens' },
      });
      expect(await keyStatus(limited.id)).toBe('active');
      expect((await chat(bystander.key, direct)).status).toBe(200);

      const refused = await useUp(limited.key, direct);
      expect(refused.status).toBe(412);
      expect(refused.body.error).toMatchObject({ code: 'budget_exhausted', type: 'budget_exceeded_error' });
      expect(refused.body.error.message).toContain(`api key 'thirty tokens' (${limited.id})`);
      const callsMade = mock.totalRequests;

      expect(await keyStatus(limited.id)).toBe('exhausted');
      const listed = await listedKeyStatuses();
      expect(listed.get(limited.id)).toBe('exhausted');
      expect(listed.get(bystander.id)).toBe('active');

      // Still refused by the budget, never by authentication.
      expect((await chat(limited.key, direct)).status).toBe(412);
      expect(mock.totalRequests).toBe(callsMade);

      const raised = await admin('PUT', `/v1/api-keys/${limited.id}`, {
        usage_limits: { credit_limit: 1_000, type: 'tokens' },
      });
      expect(raised.status).toBe('active');
      expect(await keyStatus(limited.id)).toBe('active');
      expect((await listedKeyStatuses()).get(limited.id)).toBe('active');
      expect((await chat(limited.key, direct)).status).toBe(200);
      expect(mock.totalRequests).toBe(callsMade + 1);
    });

    it('a weekly budget used up reads exhausted until the reset job starts its next period', async () => {
      const weekly = await workspaceServiceKey({
        name: 'weekly thirty',
        usage_limits: { credit_limit: 30, type: 'tokens', periodic_reset: 'weekly' },
      });
      expect((await useUp(weekly.key, direct)).status).toBe(412);
      expect(await keyStatus(weekly.id)).toBe('exhausted');

      // The job standing a week later: every weekly counter is past its boundary.
      const outcome = await t.app.get(BudgetResetJob).run(new Date(Date.now() + 8 * DAY_MS));
      expect(outcome.counters).toBeGreaterThanOrEqual(1);
      expect(await keyStatus(weekly.id)).toBe('active');
      expect((await chat(weekly.key, direct)).status).toBe(200);
    });

    it('an expired key reads expired even with its budget used up', async () => {
      const expiring = await workspaceServiceKey({
        name: 'expiring thirty',
        usage_limits: { credit_limit: 30, type: 'tokens' },
        expires_at: new Date(Date.now() + DAY_MS).toISOString(),
      });
      expect((await useUp(expiring.key, direct)).status).toBe(412);
      expect(await keyStatus(expiring.id)).toBe('exhausted');
      // The expiry job standing after the key's expiry.
      expect(await t.app.get(ApiKeysService).markExpired(new Date(Date.now() + 2 * DAY_MS))).toBe(1);
      expect(await keyStatus(expiring.id)).toBe('expired');
      expect((await listedKeyStatuses()).get(expiring.id)).toBe('expired');
    });
  });

  describe('providers and virtual keys', () => {
    it('a provider whose token budget is used up is refused with 412 and reads exhausted; raising the limit makes it active and lets calls pass', async () => {
      const created = await admin('POST', '/v1/providers', {
        name: 'Budgeted',
        slug: 'budgeted',
        integration_id: 'openai-mock',
        workspace_id: workspaceId,
        usage_limits: { credit_limit: 30, type: 'tokens' },
      });
      expect(created.status).toBe('active');
      const viaProvider = { 'x-gateway-provider': '@budgeted' };

      const refused = await useUp(workspaceKey, viaProvider);
      expect(refused.status).toBe(412);
      expect(refused.body.error).toMatchObject({ code: 'budget_exhausted', type: 'budget_exceeded_error' });
      expect(refused.body.error.message).toContain(`provider 'budgeted' (${created.id})`);
      const callsMade = mock.totalRequests;

      const read = () => admin('GET', `/v1/providers/budgeted?workspace_id=${workspaceId}`);
      const listed = async () => {
        const list = await admin('GET', `/v1/providers?workspace_id=${workspaceId}&page_size=100`);
        return new Map<string, string>(
          list.data.map((provider: { slug: string; status: string }) => [provider.slug, provider.status]),
        );
      };
      expect((await read()).status).toBe('exhausted');
      expect((await listed()).get('budgeted')).toBe('exhausted');
      // The integration's default provider, without a budget, is untouched.
      expect((await listed()).get('openai-mock')).toBe('active');
      expect((await chat(workspaceKey, viaProvider)).status).toBe(412);
      expect(mock.totalRequests).toBe(callsMade);

      const raised = await admin('PUT', `/v1/providers/budgeted?workspace_id=${workspaceId}`, {
        usage_limits: { credit_limit: 1_000, type: 'tokens' },
      });
      expect(raised.status).toBe('active');
      expect((await read()).status).toBe('active');
      expect((await listed()).get('budgeted')).toBe('active');
      expect((await chat(workspaceKey, viaProvider)).status).toBe(200);
      expect(mock.totalRequests).toBe(callsMade + 1);
    });

    it('a virtual key whose budget is used up reads exhausted; reset_usage starts a new period and lets calls pass', async () => {
      const created = await admin('POST', '/v1/virtual-keys', {
        name: 'Budgeted VK',
        slug: 'vk-budgeted',
        integration_id: 'openai-mock',
        workspace_id: workspaceId,
        usage_limits: { credit_limit: 30, type: 'tokens' },
      });
      const viaVirtualKey = { 'x-gateway-virtual-key': 'vk-budgeted' };
      expect((await useUp(workspaceKey, viaVirtualKey)).body.error.code).toBe('budget_exhausted');

      const read = () => admin('GET', `/v1/virtual-keys/vk-budgeted?workspace_id=${workspaceId}`);
      expect((await read()).status).toBe('exhausted');
      const reset = await admin('PUT', `/v1/virtual-keys/vk-budgeted?workspace_id=${workspaceId}`, {
        reset_usage: true,
      });
      expect(reset.status).toBe('active');
      expect((await read()).status).toBe('active');
      expect((await chat(workspaceKey, viaVirtualKey)).status).toBe(200);
      const [row] = await t.app
        .get(DataSource)
        .query(
          `SELECT epoch FROM usage_limit_counters WHERE value_key = 'provider:${created.id}' AND policy_key LIKE 'inline:%'`,
        );
      expect(Number(row.epoch)).toBe(1);
    });
  });
});
