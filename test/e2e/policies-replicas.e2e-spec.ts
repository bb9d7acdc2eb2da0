import Redis from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppError } from '@switchboard/common';
import { BudgetResetJob, EnforcementContext, PolicyEnforcer, Reservation } from '@switchboard/policies';
import { enforcementContexts } from '../support/policies';
import { TestApp, describeE2EWithRedis, startTestApp } from '../support/test-app';

type Attempt = { ok: true; reservation: Reservation; app: TestApp } | { ok: false; error: AppError };

const REDIS_URL = process.env.REDIS_URL ?? '';

/**
 * Two replicas: two apps with their own in-process state (policy cache, counter-row cache, usage
 * batches) sharing one database and one Redis, as two server processes behind a load balancer do.
 * The exactness of the counters across them is what Redis is for, so without REDIS_URL this suite
 * has nothing to prove and says so.
 */
describeE2EWithRedis(
  'policies: two replicas sharing Redis',
  () => {
    let a: TestApp;
    let b: TestApp;
    let organisationId: string;
    let workspaceId: string;
    const prefix = `sbtest:replicas:${randomBytes(4).toString('hex')}:`;

    const context = enforcementContexts(() => ({ organisationId, workspaceId }));
    const attempt = async (app: TestApp, input: EnforcementContext): Promise<Attempt> => {
      try {
        return { ok: true, reservation: await app.app.get(PolicyEnforcer).check(input), app };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return { ok: false, error };
      }
    };
    /** Half the requests to each replica, all at once. */
    const spread = (count: number, input: () => EnforcementContext) =>
      Promise.all(Array.from({ length: count }, (_v, index) => attempt(index % 2 === 0 ? a : b, input())));
    const passed = (attempts: Attempt[]) => attempts.filter((x): x is Extract<Attempt, { ok: true }> => x.ok);
    const until = async (condition: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 5000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };

    let sequence = 0;
    const scope = () => {
      const tag = `r${(sequence += 1)}`;
      return { conditions: [{ key: 'metadata.test', value: tag }], metadata: { test: tag } };
    };
    /** Creates a policy on replica A in the test workspace, scoped by `conditions`; answers its id. */
    const createOnA = async (
      kind: 'rate-limits' | 'usage-limits',
      conditions: ReturnType<typeof scope>['conditions'],
      fields: Record<string, unknown>,
    ): Promise<string> => {
      const created = await a.request('POST', `/v1/policies/${kind}`, {
        body: { conditions, workspace_id: workspaceId, ...fields },
      });
      expect(created.status).toBe(200);
      return created.body.id as string;
    };

    beforeAll(async () => {
      a = await startTestApp({ GATEWAY_POLICY_REDIS_PREFIX: prefix });
      b = await startTestApp({ GATEWAY_POLICY_REDIS_PREFIX: prefix }, a.database);
      [{ id: organisationId }] = await a.app.get(DataSource).query('SELECT id FROM organisations');
      workspaceId = (await a.request('POST', '/v1/admin/workspaces', { body: { name: 'Replica W' } })).body
        .id;
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it('a policy made on one replica applies on the other (invalidation through Redis)', async () => {
      const { conditions, metadata } = scope();
      const id = await createOnA('rate-limits', conditions, {
        group_by: [{ key: 'metadata.test' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      await until(async () => {
        const probe = await attempt(b, context({ metadata }));
        if (probe.ok) await b.app.get(PolicyEnforcer).release(probe.reservation);
        return !probe.ok || Object.keys(probe.reservation.headers).length > 0;
      }, 'replica B to load the new policy');
      await a.request('DELETE', `/v1/policies/rate-limits/${id}`);
      await until(async () => {
        const probe = await attempt(b, context({ metadata }));
        return probe.ok && Object.keys(probe.reservation.headers).length === 0;
      }, 'replica B to drop the archived policy');
    });

    it('200 concurrent checks spread over both replicas against a rate limit of 50 admit exactly 50', async () => {
      const { conditions, metadata } = scope();
      const id = await createOnA('rate-limits', conditions, {
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 50,
      });
      await until(async () => {
        const probe = await attempt(b, context({ metadata }));
        if (probe.ok) await b.app.get(PolicyEnforcer).release(probe.reservation);
        return probe.ok && Object.keys(probe.reservation.headers).length > 0;
      }, 'replica B to load the policy');
      const apiKeyId = randomUUID();
      const attempts = await spread(200, () => context({ apiKeyId, metadata }));
      const admitted = passed(attempts);
      expect(admitted).toHaveLength(50);
      // Both replicas admitted some: the count really was shared.
      expect(admitted.filter((x) => x.app === a).length).toBeGreaterThan(0);
      expect(admitted.filter((x) => x.app === b).length).toBeGreaterThan(0);
      for (const failure of attempts.filter((x) => !x.ok)) {
        expect(!failure.ok && failure.error).toMatchObject({ status: 429 });
        expect(!failure.ok && failure.error.message).toContain(id);
      }
    });

    it('a 50-token budget admits exactly 50 of 200 requests over both replicas, and their usage adds up', async () => {
      const { conditions, metadata } = scope();
      const id = await createOnA('usage-limits', conditions, {
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 50,
      });
      await until(async () => {
        const probe = await attempt(b, context({ metadata, estimate: { tokens: 1000 } }));
        return !probe.ok;
      }, 'replica B to load the budget');
      const apiKeyId = randomUUID();
      const attempts = await spread(200, () => context({ apiKeyId, metadata, estimate: { tokens: 1 } }));
      const admitted = passed(attempts);
      expect(admitted).toHaveLength(50);
      await Promise.all(
        admitted.map((x) => x.app.app.get(PolicyEnforcer).settle(x.reservation, { tokens: 1 })),
      );
      for (const app of [a, b]) {
        const after = await attempt(app, context({ apiKeyId, metadata }));
        expect(!after.ok && after.error.code).toBe('budget_exhausted');
      }
      // Each replica writes its own settlements; the row gets both.
      const entities = await b.request('GET', `/v1/policies/usage-limits/${id}/entities?search=${apiKeyId}`);
      expect(entities.body.data).toMatchObject([{ current_usage: 50, status: 'exhausted' }]);
      await a.request('GET', `/v1/policies/usage-limits/${id}/entities`); // flushes A's batch too
      const [row] = await a.app
        .get(DataSource)
        .query(`SELECT current_usage FROM usage_limit_counters WHERE value_key = 'api_key:${apiKeyId}'`);
      expect(Number(row.current_usage)).toBe(50);

      // A raised limit on replica A reactivates the entity on replica B.
      expect(
        (await a.request('PUT', `/v1/policies/usage-limits/${id}`, { body: { credit_limit: 51 } })).status,
      ).toBe(200);
      await until(
        async () => (await attempt(b, context({ apiKeyId, metadata }))).ok,
        'replica B to see the raised limit',
      );
    });

    it('the reset job resets a due budget once, though both replicas run it at the same moment', async () => {
      const { conditions, metadata } = scope();
      const id = await createOnA('usage-limits', conditions, {
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 5,
        periodic_reset: 'weekly',
      });
      await until(
        async () => !(await attempt(b, context({ metadata, estimate: { tokens: 100 } }))).ok,
        'replica B to load the budget',
      );
      const apiKeyId = randomUUID();
      const enforcer = a.app.get(PolicyEnforcer);
      await enforcer.settle(await enforcer.check(context({ apiKeyId, metadata })), { tokens: 5 });
      const policy = (await a.request('GET', `/v1/policies/usage-limits/${id}`)).body;
      const afterBoundary = new Date(Date.parse(policy.next_usage_reset_at) + 1000);
      await a.request('GET', `/v1/policies/usage-limits/${id}/entities`); // the usage is written
      const [first, second] = await Promise.all([
        a.app.get(BudgetResetJob).run(afterBoundary),
        b.app.get(BudgetResetJob).run(afterBoundary),
      ]);
      // Two entities are due (ours and the probe's); each is reset exactly once (epoch 0 -> 1).
      const resetRows = await a.app
        .get(DataSource)
        .query(`SELECT value_key, epoch, current_usage FROM usage_limit_counters WHERE policy_key = '${id}'`);
      expect(resetRows).toHaveLength(2);
      for (const row of resetRows) expect([row.epoch, Number(row.current_usage)]).toEqual([1, 0]);
      expect(first.counters + second.counters).toBe(2);
      expect(first.policies + second.policies).toBe(1);
      await until(
        async () => (await attempt(b, context({ apiKeyId, metadata }))).ok,
        'replica B to see the reset',
      );
    });
  },
  'replicas share counters only through Redis',
);
