import Redis from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppError } from '@switchboard/common';
import { LockService } from '@switchboard/database';
import { BudgetResetJob, EnforcementContext, InlineLimits, PolicyEnforcer } from '@switchboard/policies';
import { enforcementContexts } from '../support/policies';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

const DAY_MS = 86_400_000;

/**
 * The budget reset job: periodic budgets start a new period at their boundaries (weekly, monthly,
 * every n days from next_usage_reset_at), once, idempotently. `run(now)` takes the moment to
 * stand at, so a test can stand after a boundary weeks away.
 */
describeE2E('policies: budget reset job', () => {
  let t: TestApp;
  let organisationId: string;
  let workspaceId: string;
  const prefix = `sbtest:jobs:${randomBytes(4).toString('hex')}:`;

  const job = () => t.app.get(BudgetResetJob);
  const enforcer = () => t.app.get(PolicyEnforcer);
  const context = enforcementContexts(() => ({ organisationId, workspaceId }));
  const admitted = async (input: EnforcementContext) => {
    try {
      await enforcer().release(await enforcer().check(input));
      return true;
    } catch (error) {
      if (error instanceof AppError && error.status === 412) return false;
      throw error;
    }
  };
  let sequence = 0;
  async function budget(over: Record<string, unknown>) {
    const tag = `j${(sequence += 1)}`;
    const response = await t.request('POST', '/v1/policies/usage-limits', {
      body: {
        conditions: [{ key: 'metadata.test', value: tag }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 10,
        workspace_id: workspaceId,
        ...over,
      },
    });
    expect(response.status).toBe(200);
    const id = response.body.id as string;
    const apiKeyId = randomUUID();
    const input = context({ apiKeyId, metadata: { test: tag } });
    await enforcer().settle(await enforcer().check(input), { tokens: 10 });
    expect(await admitted(input)).toBe(false);
    return { id, input, apiKeyId };
  }
  const policy = async (id: string) => (await t.request('GET', `/v1/policies/usage-limits/${id}`)).body;
  const entity = async (id: string) =>
    (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.data[0];

  beforeAll(async () => {
    t = await startTestApp({ GATEWAY_POLICY_REDIS_PREFIX: prefix });
    [{ id: organisationId }] = await t.app.get(DataSource).query('SELECT id FROM organisations');
    workspaceId = (await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Jobs W' } })).body.id;
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

  it('a weekly budget resets at its boundary and moves on a week; a second run does nothing', async () => {
    const { id, input } = await budget({ periodic_reset: 'weekly' });
    const before = await policy(id);
    const boundary = Date.parse(before.next_usage_reset_at);
    expect(new Date(boundary).getUTCDay()).toBe(1);

    expect(await job().run(new Date(boundary - 1000))).toEqual({ policies: 0, counters: 0 });
    const now = new Date(boundary + 1000);
    const first = await job().run(now);
    expect(first.counters).toBeGreaterThanOrEqual(1);
    expect(first.policies).toBeGreaterThanOrEqual(1);
    const after = await policy(id);
    expect(after.next_usage_reset_at).toBe(new Date(boundary + 7 * DAY_MS).toISOString());
    expect(after.last_reset_at).toBe(now.toISOString());
    expect(await entity(id)).toMatchObject({
      current_usage: 0,
      status: 'active',
      last_reset_at: now.toISOString(),
      next_usage_reset_at: new Date(boundary + 7 * DAY_MS).toISOString(),
    });
    expect(await admitted(input)).toBe(true);

    const again = await job().run(now);
    expect(again).toEqual({ policies: 0, counters: 0 });
  });

  it('a monthly budget moves to the 1st of the following month', async () => {
    const { id, input } = await budget({ periodic_reset: 'monthly' });
    const boundary = new Date((await policy(id)).next_usage_reset_at);
    expect(boundary.getUTCDate()).toBe(1);
    await job().run(new Date(boundary.getTime() + 60_000));
    const next = new Date((await policy(id)).next_usage_reset_at);
    expect(next.toISOString()).toBe(
      new Date(Date.UTC(boundary.getUTCFullYear(), boundary.getUTCMonth() + 1, 1)).toISOString(),
    );
    expect(await admitted(input)).toBe(true);
  });

  it('an every-n-days budget counts from next_usage_reset_at, and skips the periods a late run missed', async () => {
    const first = new Date(Date.now() + 2 * DAY_MS);
    const { id, input } = await budget({ periodic_reset_days: 3, next_usage_reset_at: first.toISOString() });
    // The job runs 10 days after the first boundary: periods at +3, +6, +9 days were missed.
    await job().run(new Date(first.getTime() + 10 * DAY_MS));
    expect((await policy(id)).next_usage_reset_at).toBe(
      new Date(first.getTime() + 12 * DAY_MS).toISOString(),
    );
    expect((await entity(id)).next_usage_reset_at).toBe(
      new Date(first.getTime() + 12 * DAY_MS).toISOString(),
    );
    expect(await admitted(input)).toBe(true);
  });

  it('cumulative budgets never reset', async () => {
    const { id, input } = await budget({});
    await job().run(new Date(Date.now() + 400 * DAY_MS));
    expect((await entity(id)).current_usage).toBe(10);
    expect(await admitted(input)).toBe(false);
  });

  it('budgets declared inline on keys reset by their own schedule too', async () => {
    const apiKeyId = randomUUID();
    const inline: InlineLimits = {
      kind: 'api_key',
      id: apiKeyId,
      usageLimits: { credit_limit: 5, type: 'tokens', periodic_reset_days: 1 },
    };
    const input = context({ apiKeyId, inline: [inline] });
    await enforcer().settle(await enforcer().check(input), { tokens: 5 });
    expect(await admitted(input)).toBe(false);
    const [row] = await t.app
      .get(DataSource)
      .query(`SELECT next_reset_at FROM usage_limit_counters WHERE value_key = 'api_key:${apiKeyId}'`);
    const next = new Date(row.next_reset_at);
    expect(Math.abs(next.getTime() - (Date.now() + DAY_MS))).toBeLessThan(60_000);
    const { counters } = await job().run(new Date(next.getTime() + 1000));
    expect(counters).toBeGreaterThanOrEqual(1);
    expect(await admitted(input)).toBe(true);
  });

  it('runs on one replica at a time: while another holds the lock, a run does nothing', async () => {
    const { id } = await budget({ periodic_reset: 'weekly' });
    const boundary = Date.parse((await policy(id)).next_usage_reset_at);
    await t.app.get(LockService).run('job:budget-reset', async () => {
      expect(await job().run(new Date(boundary + 1000))).toEqual({ policies: 0, counters: 0 });
    });
    expect((await entity(id)).current_usage).toBe(10);
  });

  it('the cron tick does nothing in a process started with GATEWAY_JOBS=false', async () => {
    expect(t.config.jobsEnabled).toBe(false);
    const { id } = await budget({
      periodic_reset_days: 1,
      next_usage_reset_at: new Date(Date.now() + 1200).toISOString(),
    });
    await new Promise((resolve) => setTimeout(resolve, 1300));
    await job().tick();
    const [row] = await t.app
      .get(DataSource)
      .query(`SELECT epoch FROM usage_limit_counters WHERE policy_key = '${id}'`);
    expect(row.epoch).toBe(0);
    expect((await policy(id)).last_reset_at).toBeNull();
  });
});
