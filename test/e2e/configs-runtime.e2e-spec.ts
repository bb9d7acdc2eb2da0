import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import {
  AttemptOutcome,
  BREAKER_KEY_PREFIX,
  CACHE_KEY_PREFIX,
  ConfigRuntime,
  ConfigStore,
  RedisBreakerStore,
  RequestConfig,
  replayChunks,
} from '@switchboard/configs';
import { TestApp, describeE2E, itWithRedis, startTestApp } from '../support/test-app';

/**
 * The data-plane side of configs inside the running app: the response cache and the circuit
 * breakers, in memory on SQLite runs and in Redis on PostgreSQL + Redis runs (where two app
 * instances play two replicas sharing the same state).
 */
describeE2E('configs runtime (cache and circuit breakers)', () => {
  const redisUrl = process.env.REDIS_URL;
  let t: TestApp;
  let replica: TestApp | null = null;
  let redis: Redis | null = null;
  const workspaceId = randomUUID();
  const cacheKeys: string[] = [];

  const runtime = (app: TestApp = t) => app.app.get(ConfigRuntime);
  const resolve = async (config: unknown, app: TestApp = t): Promise<RequestConfig> =>
    (await app.app.get(ConfigStore).resolveForRequest({ workspaceId, header: JSON.stringify(config) }))!;

  beforeAll(async () => {
    t = await startTestApp();
    if (redisUrl) {
      replica = await startTestApp({}, t.database);
      redis = new Redis(redisUrl);
    }
  });
  afterAll(async () => {
    if (redis) {
      // Everything these tests stored: their cache keys and the breakers of their workspace.
      if (cacheKeys.length > 0) await redis.del(...cacheKeys.map((key) => CACHE_KEY_PREFIX + key));
      const breakers = await redis.keys(`${BREAKER_KEY_PREFIX}${workspaceId}:*`);
      const own = await redis.keys(`test:configs:${workspaceId}:*`);
      if (breakers.length + own.length > 0) await redis.del(...breakers, ...own);
      await redis.quit();
    }
    await replica?.close();
    await t?.close();
  });

  describe('response cache', () => {
    const config = { provider: 'openai', cache: { mode: 'simple', max_age: 60 } };
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hello ${randomUUID()}` }] };
    const input = { workspaceId, route: 'chat.completions', body, metadata: { team: 'a' }, headers: {} };

    it('is DISABLED for a config without cache', async () => {
      const session = runtime().openCache(await resolve({ provider: 'openai' }), input);
      expect(session.status).toBe('DISABLED');
      expect(runtime().openCache(null, input).status).toBe('DISABLED');
    });

    it('misses, stores, hits; namespaces and force refresh', async () => {
      const requestConfig = await resolve(config);
      const miss = runtime().openCache(requestConfig, input);
      expect(await miss.lookup()).toBeNull();
      expect(miss.status).toBe('MISS');
      cacheKeys.push(miss.key!);
      await miss.storeJson(200, { 'content-type': 'application/json' }, '{"answer":1}');
      if (redis) expect(await redis.exists(CACHE_KEY_PREFIX + miss.key)).toBe(1);

      const hit = runtime().openCache(requestConfig, input);
      expect((await hit.lookup())!.body!.toString()).toBe('{"answer":1}');
      expect(hit.status).toBe('HIT');

      const otherMetadata = runtime().openCache(requestConfig, { ...input, metadata: { team: 'b' } });
      expect(await otherMetadata.lookup()).toBeNull();
      const namespaced = runtime().openCache(requestConfig, { ...input, namespace: 'shared' });
      cacheKeys.push(namespaced.key!);
      await namespaced.storeJson(200, {}, '{"answer":"ns"}');
      const sameNamespace = runtime().openCache(requestConfig, {
        ...input,
        namespace: 'shared',
        metadata: { team: 'b' },
      });
      expect((await sameNamespace.lookup())!.body!.toString()).toBe('{"answer":"ns"}');

      const refresh = runtime().openCache(requestConfig, { ...input, forceRefresh: true });
      expect(await refresh.lookup()).toBeNull();
      expect(refresh.status).toBe('REFRESH');
      await refresh.storeJson(200, {}, '{"answer":2}');
      expect((await runtime().openCache(requestConfig, input).lookup())!.body!.toString()).toBe(
        '{"answer":2}',
      );
    });

    it('replays a stored stream chunk by chunk', async () => {
      const requestConfig = await resolve(config);
      const streamInput = { ...input, body: { ...body, stream: true } };
      const miss = runtime().openCache(requestConfig, streamInput);
      cacheKeys.push(miss.key!);
      const chunks = [
        'data: {"id":"1","choices":[{"delta":{"content":"Hel"}}]}\n\n',
        'data: {"id":"1","choices":[{"delta":{"content":"lo"}}]}\n\n',
        'data: [DONE]\n\n',
      ];
      const recorder = miss.recordStream(200, { 'content-type': 'text/event-stream' });
      for (const chunk of chunks) recorder.push(chunk);
      await recorder.finish();
      const hit = await runtime().openCache(requestConfig, streamInput).lookup();
      expect(hit!.kind).toBe('stream');
      const replayed: string[] = [];
      for await (const chunk of replayChunks(hit!)) replayed.push(chunk.toString());
      expect(replayed).toEqual(chunks);
    });

    itWithRedis('another replica answers from the same cache', async () => {
      const miss = runtime().openCache(await resolve(config), { ...input, namespace: 'replicas' });
      cacheKeys.push(miss.key!);
      await miss.storeJson(200, {}, '{"from":"replica one"}');
      const elsewhere = runtime(replica!).openCache(await resolve(config, replica!), {
        ...input,
        namespace: 'replicas',
      });
      expect((await elsewhere.lookup())!.body!.toString()).toBe('{"from":"replica one"}');
    });
  });

  describe('circuit breakers', () => {
    const config = {
      strategy: { mode: 'fallback', cb_config: { failure_threshold: 2, cooldown_interval: 60_000 } },
      targets: [
        { name: 'primary', provider: 'openai' },
        { name: 'backup', provider: 'anthropic' },
      ],
    };
    const calls: string[] = [];
    const attempt = async (target: { name?: string }): Promise<AttemptOutcome<string>> => {
      calls.push(target.name!);
      return target.name === 'primary' ? { status: 503 } : { status: 200, result: 'ok' };
    };

    it('open after the threshold, so the failing target is skipped', async () => {
      const requestConfig = await resolve(config);
      for (let i = 0; i < 2; i += 1) await runtime().run(requestConfig, {}, attempt);
      expect(calls).toEqual(['primary', 'backup', 'primary', 'backup']);
      const third = await runtime().run(requestConfig, {}, attempt);
      expect(calls.slice(4)).toEqual(['backup']);
      expect(third.attempts[0]).toMatchObject({ path: 'targets[0]', skipped: 'circuit_open' });
      expect(third).toMatchObject({ ok: true, servedBy: 'targets[1]' });
    });

    itWithRedis('are shared with another replica through Redis', async () => {
      const before = calls.length;
      const result = await runtime(replica!).run(await resolve(config, replica!), {}, attempt);
      expect(calls.slice(before)).toEqual(['backup']);
      expect(result.attempts[0].skipped).toBe('circuit_open');
    });

    itWithRedis('the Redis store runs the same transitions atomically', async () => {
      const store = new RedisBreakerStore(redis!, `test:configs:${workspaceId}:`);
      const settings = { failure_threshold: 2, cooldown_interval: 1000 };
      expect(await store.record('t', settings, true, 1000)).toBe('closed');
      expect(await store.inspect('t')).toEqual({ failures: 1, total: 1, windowStart: 1000, openUntil: 0 });
      // Concurrent outcomes from many replicas are all counted.
      await Promise.all(
        Array.from({ length: 5 }, () =>
          store.record('u', { failure_threshold: 100, cooldown_interval: 1000 }, true, 1000),
        ),
      );
      expect((await store.inspect('u')).failures).toBe(5);
      expect(await store.record('t', settings, true, 1100)).toBe('open');
      expect(await store.openStates(['t', 'absent'], 1500)).toEqual([true, false]);
      expect(await store.record('t', settings, false, 1500)).toBe('open'); // a straggler while open
      expect(await store.openStates(['t'], 2100)).toEqual([false]); // half-open
      expect(await store.record('t', settings, true, 2100)).toBe('open'); // the probe failed
      expect((await store.inspect('t')).openUntil).toBe(3100);
      expect(await store.record('t', settings, false, 3100)).toBe('closed'); // the probe succeeded
      expect(await store.inspect('t')).toEqual({ failures: 0, total: 0, windowStart: 0, openUntil: 0 });
      // The failure rate with a minimum number of requests.
      const rate = { failure_threshold_percentage: 50, minimum_requests: 4, cooldown_interval: 1000 };
      for (const failed of [false, true, false])
        expect(await store.record('r', rate, failed, 5000)).toBe('closed');
      expect(await store.record('r', rate, true, 5000)).toBe('open');
    });
  });
});
