/**
 * The response cache through the data plane (issue 5: "cache hit, miss, namespace and force
 * refresh, for JSON and for streams").
 *
 * Where each expectation comes from:
 * - `cache: {mode: "simple", max_age}` in a config; only 2xx answers are stored; a stream is
 *   stored as its chunks and replayed as a stream; the key is the route and body plus metadata and
 *   provider headers, or the `x-gateway-cache-namespace` instead; `x-gateway-cache-force-refresh:
 *   true` skips the lookup, calls the provider and stores the answer (docs/configs.md "Response
 *   cache"; the spec's chat completions header table for the two request headers).
 * - `x-gateway-cache-status`: `HIT`, `MISS`, `REFRESH` or `DISABLED` (docs/configs.md "Response
 *   headers").
 * - Log records carry the cache status as `metrics.cache_status`: `hit`, `miss`, `refresh`,
 *   `disabled` (libs/observability LogRecord.cacheStatus; issue 5: "Cache hits are logged with
 *   their status").
 * On Redis runs the entries live under `switchboard:cache:` with the config's max_age (120 s) as
 * their TTL, and every key includes this run's fresh workspace id, so runs never share entries.
 */
import OpenAI from 'openai';
import { fetch } from 'undici';
import { validateConfig } from '../../libs/configs/src';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { MockServer, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

async function until<T>(read: () => Promise<T | undefined | false> | T | undefined | false, what: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not met in time: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeE2E('gateway: response cache', () => {
  let t: TestApp;
  let mock: MockServer;
  let workspaceId: string;
  let workspaceKey: string;
  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;

  let cached: string;
  let uncached: string;

  /** A chat body no other test sends, so every test starts from an empty cache. */
  const freshBody = (extra: Record<string, unknown> = {}) => ({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: unique('cache me') }],
    ...extra,
  });

  async function send(body: Record<string, unknown>, headers: Record<string, string> = {}, config = cached) {
    const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': workspaceKey,
        'x-gateway-config': config,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    let json: any = text;
    try {
      json = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, headers: response.headers, text, body: json };
  }

  const status = (answer: { headers: { get(name: string): string | null } }) =>
    answer.headers.get('x-gateway-cache-status');

  async function theLogOf(traceId: string) {
    const listed = await until(async () => {
      const answer = await t.request('GET', `/v1/logs?trace_id=${traceId}`, { key: workspaceKey });
      expect(answer.status).toBe(200);
      return answer.body.data.length > 0 ? answer : undefined;
    }, `a log record for ${traceId}`);
    expect(listed.body.data).toHaveLength(1);
    return listed.body.data[0];
  }

  beforeAll(async () => {
    mock = await startOpenAIMock();
    t = await startTestApp({}, undefined, { listen: true });
    const workspace = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique('Cache W') } });
    expect(workspace.status).toBe(200);
    workspaceId = workspace.body.id;
    const key = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'cache traffic', workspace_id: workspaceId, scopes: WORKSPACE_SCOPES },
    });
    expect(key.status).toBe(200);
    workspaceKey = key.body.key;
    const target = { provider: 'openai', api_key: 'sk-cache-upstream', custom_host: `${mock.url}/v1` };
    const withCache = { ...target, cache: { mode: 'simple', max_age: 120 } };
    validateConfig(withCache);
    validateConfig(target);
    cached = JSON.stringify(withCache);
    uncached = JSON.stringify(target);
  });

  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('a config without cache answers DISABLED and always calls the provider', async () => {
    const body = freshBody();
    const first = await send(body, {}, uncached);
    const second = await send(body, {}, uncached);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([status(first), status(second)]).toEqual(['DISABLED', 'DISABLED']);
    expect(mock.requests).toHaveLength(2);
  });

  it('JSON: a miss calls the provider and stores; the same request is a hit with the identical body', async () => {
    const body = freshBody();
    const miss = await send(body);
    expect(miss.status).toBe(200);
    expect(status(miss)).toBe('MISS');
    const hit = await send(body);
    expect(hit.status).toBe(200);
    expect(status(hit)).toBe('HIT');
    expect(hit.text).toBe(miss.text);
    expect(hit.headers.get('content-type')).toMatch(/^application\/json/);
    expect(mock.requests).toHaveLength(1);
  });

  it('field order in the body does not matter', async () => {
    const content = unique('order');
    await send({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], temperature: 0 });
    const reordered = await send({
      temperature: 0,
      messages: [{ content, role: 'user' }],
      model: 'gpt-4o-mini',
    });
    expect(status(reordered)).toBe('HIT');
    expect(mock.requests).toHaveLength(1);
  });

  it('a different body or different metadata is a different entry', async () => {
    const body = freshBody();
    await send(body, { 'x-gateway-metadata': JSON.stringify({ team: 'a' }) });
    const otherMetadata = await send(body, { 'x-gateway-metadata': JSON.stringify({ team: 'b' }) });
    expect(status(otherMetadata)).toBe('MISS');
    const otherBody = await send(
      { ...body, temperature: 0.5 },
      { 'x-gateway-metadata': JSON.stringify({ team: 'a' }) },
    );
    expect(status(otherBody)).toBe('MISS');
    const same = await send(body, { 'x-gateway-metadata': JSON.stringify({ team: 'a' }) });
    expect(status(same)).toBe('HIT');
    expect(mock.requests).toHaveLength(3);
  });

  it('x-gateway-cache-namespace separates entries and replaces metadata in the key', async () => {
    const body = freshBody();
    const a = await send(body, { 'x-gateway-cache-namespace': 'ns-a' });
    expect(status(a)).toBe('MISS');
    const b = await send(body, { 'x-gateway-cache-namespace': 'ns-b' });
    expect(status(b)).toBe('MISS');
    const plain = await send(body);
    expect(status(plain)).toBe('MISS');
    expect(mock.requests).toHaveLength(3);
    // Same namespace, other metadata: still the namespace's entry.
    const again = await send(body, {
      'x-gateway-cache-namespace': 'ns-a',
      'x-gateway-metadata': JSON.stringify({ team: 'other' }),
    });
    expect(status(again)).toBe('HIT');
    expect(again.text).toBe(a.text);
    expect(mock.requests).toHaveLength(3);
  });

  it('x-gateway-cache-force-refresh: true calls the provider and stores the fresh answer', async () => {
    const body = freshBody();
    const first = await send(body);
    expect(status(first)).toBe('MISS');
    expect(first.body.choices[0].message.content).toBe('Hello from the mock upstream.');
    mock.setReply({ text: 'A fresher answer.' });
    const refreshed = await send(body, { 'x-gateway-cache-force-refresh': 'true' });
    expect(refreshed.status).toBe(200);
    expect(status(refreshed)).toBe('REFRESH');
    expect(refreshed.body.choices[0].message.content).toBe('A fresher answer.');
    expect(mock.requests).toHaveLength(2);
    const hit = await send(body);
    expect(status(hit)).toBe('HIT');
    expect(hit.text).toBe(refreshed.text);
    expect(mock.requests).toHaveLength(2);
  });

  it('only 2xx answers are stored', async () => {
    const body = freshBody();
    mock.failNext(1, { status: 500 });
    const failed = await send(body);
    expect(failed.status).toBe(500);
    const next = await send(body);
    expect(next.status).toBe(200);
    expect(status(next)).toBe('MISS');
    expect(mock.requests).toHaveLength(2);
    expect(status(await send(body))).toBe('HIT');
    expect(mock.requests).toHaveLength(2);
  });

  it('a stream is cached and replayed as a stream: the client reads the same chunks', async () => {
    const openai = new OpenAI({
      apiKey: 'unused',
      baseURL: `${t.baseUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': workspaceKey, 'x-gateway-config': cached },
    });
    const content = unique('stream me');
    const read = async () => {
      const { data: stream, response } = await openai.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content }],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      return {
        chunks,
        status: response.headers.get('x-gateway-cache-status'),
        type: response.headers.get('content-type'),
      };
    };
    const miss = await read();
    expect(miss.status).toBe('MISS');
    expect(miss.chunks.length).toBeGreaterThan(2);
    expect(miss.chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(
      'Hello from the mock upstream.',
    );
    const hit = await read();
    expect(hit.status).toBe('HIT');
    expect(hit.type).toMatch(/^text\/event-stream/);
    expect(hit.chunks).toEqual(miss.chunks);
    expect(mock.requests).toHaveLength(1);

    // The raw replay ends like the original: with data: [DONE]. The client sent its (unused)
    // Authorization, which is part of the cache key, so the raw call sends the same.
    const raw = await send(
      {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content }],
        stream: true,
        stream_options: { include_usage: true },
      },
      { authorization: 'Bearer unused' },
    );
    expect(status(raw)).toBe('HIT');
    expect(raw.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(mock.requests).toHaveLength(1);
  });

  it('a streamed and a JSON request with the same messages are different entries', async () => {
    const body = freshBody();
    await send(body);
    const streamed = await send({ ...body, stream: true });
    expect(status(streamed)).toBe('MISS');
    expect(streamed.text).toMatch(/^data: /);
    expect(mock.requests).toHaveLength(2);
  });

  it('a stored config with cache, named by slug, caches the same way', async () => {
    const created = await t.request('POST', '/v1/configs', {
      body: { name: unique('Cached'), workspace_id: workspaceId, config: JSON.parse(cached) },
    });
    expect(created.status).toBe(200);
    const body = freshBody();
    expect(status(await send(body, {}, created.body.data.slug))).toBe('MISS');
    expect(status(await send(body, {}, created.body.data.slug))).toBe('HIT');
    expect(mock.requests).toHaveLength(1);
  });

  it('log records carry the cache status: miss, hit, refresh', async () => {
    const body = freshBody();
    const traces = { miss: unique('trace-miss'), hit: unique('trace-hit'), refresh: unique('trace-refresh') };
    expect(status(await send(body, { 'x-gateway-trace-id': traces.miss }))).toBe('MISS');
    expect(status(await send(body, { 'x-gateway-trace-id': traces.hit }))).toBe('HIT');
    expect(
      status(
        await send(body, { 'x-gateway-trace-id': traces.refresh, 'x-gateway-cache-force-refresh': 'true' }),
      ),
    ).toBe('REFRESH');
    const miss = await theLogOf(traces.miss);
    const hit = await theLogOf(traces.hit);
    const refresh = await theLogOf(traces.refresh);
    expect(miss.metrics).toMatchObject({
      cache_status: 'miss',
      response_status_code: 200,
      ai_model: 'gpt-4o-mini',
    });
    expect(hit.metrics).toMatchObject({
      cache_status: 'hit',
      response_status_code: 200,
      ai_model: 'gpt-4o-mini',
    });
    expect(refresh.metrics).toMatchObject({ cache_status: 'refresh', response_status_code: 200 });
    expect(mock.requests).toHaveLength(2);
  });
});
