import { Readable } from 'node:stream';
import {
  CacheOpenInput,
  CachedResponse,
  MemoryCacheStore,
  ResponseCache,
  cacheKey,
  cacheKeyHeaders,
  isForceRefresh,
  replayChunks,
  replayStream,
} from './response-cache';

const base: CacheOpenInput = {
  workspaceId: 'ws-1',
  scope: 'ws-1:cfg:v1',
  route: 'chat.completions',
  body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0 },
  metadata: { user: 'u1' },
  headers: { 'x-gateway-provider': 'openai' },
};
const simple = { mode: 'simple' as const, max_age: 60 };

async function collect(iterable: AsyncIterable<Buffer> | Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of iterable) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts).toString();
}

describe('response cache', () => {
  let now: number;
  let cache: ResponseCache;
  beforeEach(() => {
    now = 1_000_000;
    cache = new ResponseCache(new MemoryCacheStore(), { now: () => now });
  });

  describe('keys', () => {
    it('do not depend on the order of body fields', () => {
      const reordered = {
        ...base,
        body: { temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'gpt-4o' },
      };
      expect(cacheKey(reordered)).toBe(cacheKey(base));
    });

    it('change with the body, route, workspace, config, metadata and headers', () => {
      const key = cacheKey(base);
      expect(cacheKey({ ...base, body: { ...(base.body as object), temperature: 1 } })).not.toBe(key);
      expect(cacheKey({ ...base, route: 'completions' })).not.toBe(key);
      expect(cacheKey({ ...base, workspaceId: 'ws-2' })).not.toBe(key);
      expect(cacheKey({ ...base, scope: 'ws-1:cfg:v2' })).not.toBe(key);
      expect(cacheKey({ ...base, metadata: { user: 'u2' } })).not.toBe(key);
      expect(cacheKey({ ...base, headers: { 'x-gateway-provider': 'anthropic' } })).not.toBe(key);
    });

    it('with a namespace, ignore metadata and headers but keep the body and workspace', () => {
      const a = cacheKey({ ...base, namespace: 'team-a' });
      expect(cacheKey({ ...base, namespace: 'team-a', metadata: { user: 'u2' }, headers: {} })).toBe(a);
      expect(cacheKey({ ...base, namespace: 'team-b' })).not.toBe(a);
      expect(cacheKey({ ...base, namespace: 'team-a', workspaceId: 'ws-2' })).not.toBe(a);
      expect(cacheKey({ ...base, namespace: 'team-a', body: { model: 'other' } })).not.toBe(a);
    });

    it('hash raw bodies byte for byte', () => {
      expect(cacheKey({ ...base, body: Buffer.from('abc') })).toBe(
        cacheKey({ ...base, body: Buffer.from('abc') }),
      );
      expect(cacheKey({ ...base, body: Buffer.from('abc') })).not.toBe(
        cacheKey({ ...base, body: Buffer.from('abd') }),
      );
    });

    it('take only the headers that shape the answer, and never keep the provider key', () => {
      const picked = cacheKeyHeaders({
        'x-gateway-provider': 'openai',
        'x-gateway-trace-id': 't',
        'x-gateway-api-key': 'sb-secret',
        'x-gateway-cache-namespace': 'n',
        'x-gateway-metadata': '{}',
        'anthropic-version': '2023-06-01',
        authorization: 'Bearer sk-live',
        'user-agent': 'curl',
      });
      expect(Object.keys(picked).sort()).toEqual([
        'anthropic-version',
        'authorization',
        'x-gateway-provider',
      ]);
      expect(picked.authorization).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  it('is DISABLED without cache settings and never stores', async () => {
    const session = cache.open(null, base);
    expect(session.status).toBe('DISABLED');
    await session.storeJson(200, {}, '{}');
    expect(await session.lookup()).toBeNull();
    expect(cache.open(simple, base).status).toBe('MISS');
    expect(await cache.open(simple, base).lookup()).toBeNull();
  });

  it('misses, stores a JSON answer, then hits', async () => {
    const first = cache.open(simple, base);
    expect(await first.lookup()).toBeNull();
    expect(first.status).toBe('MISS');
    await first.storeJson(200, { 'content-type': 'application/json' }, '{"id":"chatcmpl-1"}');

    const second = cache.open(simple, base);
    const hit = await second.lookup();
    expect(second.status).toBe('HIT');
    expect(hit).toMatchObject({
      kind: 'json',
      status: 200,
      headers: { 'content-type': 'application/json' },
      storedAt: now,
    });
    expect(hit!.body!.toString()).toBe('{"id":"chatcmpl-1"}');
    expect(await collect(replayChunks(hit!))).toBe('{"id":"chatcmpl-1"}');
  });

  it('keeps namespaces apart', async () => {
    await cache.open(simple, { ...base, namespace: 'a' }).storeJson(200, {}, 'A');
    const other = cache.open(simple, { ...base, namespace: 'b' });
    expect(await other.lookup()).toBeNull();
    const same = cache.open(simple, { ...base, namespace: 'a', metadata: { anything: 'else' } });
    expect((await same.lookup())!.body!.toString()).toBe('A');
  });

  it('force refresh skips the lookup and stores the fresh answer', async () => {
    await cache.open(simple, base).storeJson(200, {}, 'old');
    const refresh = cache.open(simple, { ...base, forceRefresh: true });
    expect(refresh.status).toBe('REFRESH');
    expect(await refresh.lookup()).toBeNull();
    expect(refresh.status).toBe('REFRESH');
    await refresh.storeJson(200, {}, 'new');
    expect((await cache.open(simple, base).lookup())!.body!.toString()).toBe('new');
  });

  it('does not store failures', async () => {
    await cache.open(simple, base).storeJson(500, {}, 'error');
    await cache.open(simple, base).storeJson(429, {}, 'slow down');
    expect(await cache.open(simple, base).lookup()).toBeNull();
  });

  it('expires entries after max_age', async () => {
    const short = new ResponseCache(new MemoryCacheStore({ now: () => now }), { now: () => now });
    await short.open({ mode: 'simple', max_age: 1 }, base).storeJson(200, {}, 'x');
    now += 999;
    expect(await short.open(simple, base).lookup()).not.toBeNull();
    now += 1;
    expect(await short.open(simple, base).lookup()).toBeNull();
  });

  it('records a stream as its chunks and replays it as a stream', async () => {
    const miss = cache.open(simple, { ...base, body: { ...(base.body as object), stream: true } });
    expect(await miss.lookup()).toBeNull();
    const recorder = miss.recordStream(200, { 'content-type': 'text/event-stream' });
    const chunks = ['data: {"a":1}\n\n', Buffer.from('data: {"a":2}\n\n'), 'data: [DONE]\n\n'];
    for (const chunk of chunks) recorder.push(chunk);
    await recorder.finish();

    const hit = await cache
      .open(simple, { ...base, body: { ...(base.body as object), stream: true } })
      .lookup();
    expect(hit).toMatchObject({
      kind: 'stream',
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
    });
    expect(hit!.chunks!.map((chunk) => chunk.toString())).toEqual(chunks.map(String));
    expect(await collect(replayStream(hit!))).toBe(chunks.map(String).join(''));
  });

  it('stores nothing for an abandoned or oversized stream', async () => {
    const abandoned = cache.open(simple, base).recordStream(200, {});
    abandoned.push('data: partial\n\n');
    abandoned.abandon();
    await abandoned.finish();
    expect(await cache.open(simple, base).lookup()).toBeNull();

    const small = new ResponseCache(new MemoryCacheStore(), { maxEntryBytes: 1024 });
    const big = small.open(simple, base).recordStream(200, {});
    for (let i = 0; i < 10; i += 1) big.push('x'.repeat(200));
    await big.finish();
    expect(await small.open(simple, base).lookup()).toBeNull();
  });

  it('turns store failures into misses', async () => {
    const errors: unknown[] = [];
    const broken = new ResponseCache(
      {
        get: async () => {
          throw new Error('redis down');
        },
        set: async () => {
          throw new Error('redis down');
        },
      },
      { onError: (error) => errors.push(error) },
    );
    const session = broken.open(simple, base);
    expect(await session.lookup()).toBeNull();
    await session.storeJson(200, {}, 'x');
    expect(errors).toHaveLength(2);
  });

  it('bounds the in-memory store by size (least recently used goes first)', async () => {
    const store = new MemoryCacheStore({ maxBytes: 3000 });
    const entry = (body: string): CachedResponse => ({
      kind: 'json',
      status: 200,
      headers: {},
      body: Buffer.from(body),
      storedAt: 0,
    });
    await store.set('a', entry('a'.repeat(1000)), 60_000);
    await store.set('b', entry('b'.repeat(1000)), 60_000);
    await store.get('a');
    await store.set('c', entry('c'.repeat(1000)), 60_000);
    expect(await store.get('a')).not.toBeNull();
    expect(await store.get('b')).toBeNull();
    expect(await store.get('c')).not.toBeNull();
  });

  it('reads the force-refresh header as a boolean', () => {
    expect(isForceRefresh('true')).toBe(true);
    expect(isForceRefresh('TRUE')).toBe(true);
    expect(isForceRefresh('false')).toBe(false);
    expect(isForceRefresh(undefined)).toBe(false);
  });
});
