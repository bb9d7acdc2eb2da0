/**
 * Configs through the data plane (issue 5, "Done means"): fallback, loadbalance, conditional
 * routing, retries with Retry-After, request timeouts, circuit breakers, streams, AB01.
 *
 * Where each expectation comes from (docs/configs.md unless said otherwise):
 * - `x-gateway-config`: a stored config's id or slug, or the config object as JSON ("Using a
 *   config on a request"); an unknown or foreign ref is 404 `config_not_found` (ConfigErrors).
 * - AB01: status 400, `code: "AB01"`, `param` and message naming the path
 *   (`targets[1].retry.attempts must be at most 5 (rule: max)`); issue 5 names the same path.
 * - Response headers: `x-gateway-retry-count` (retries on the target that produced the answer) and
 *   `x-gateway-target-index` (its index path, `targets[2]`) ("Response headers").
 * - fallback: next target on any status >= 400, transport error or timeout; with
 *   `on_status_codes` only those move on; a stream falls back only before its first byte.
 * - loadbalance: drawn in proportion to `weight`; weight 0 is never drawn. Issue 5: within 3% over
 *   2,000 requests.
 * - conditional: `metadata.<key>` from `x-gateway-metadata`, `$eq`, `then`, `default`.
 * - retry: `attempts` after the first try on `on_status_codes`; `Retry-After` is waited for, but
 *   longer than 30 s the failure is returned at once with its `Retry-After`.
 * - request_timeout: the call is aborted and the attempt ends with 408, code `request_timeout`,
 *   type `timeout_error` ("Timeouts"); a fallback can move past it.
 * - cb_config: `failure_threshold`, `cooldown_interval` (ms, also the counting window); an open
 *   circuit is skipped; after the cooldown the first outcome closes it ("Circuit breaker").
 * - Logs (issue 5: "a fallback chain of three that rescues a request and logs each attempt"): one
 *   record per target attempted, all under the request's trace id, each with its own status; a
 *   target's retries are counted in that record's `retry_count`, not logged apart.
 * Tests assert counts, statuses and headers, never durations.
 */
import Redis from 'ioredis';
import OpenAI from 'openai';
import { Headers as UndiciHeaders, fetch } from 'undici';
import { BREAKER_KEY_PREFIX, validateConfig } from '../../libs/configs/src';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { MockServer, startAnthropicMock, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

const MOCK_TEXT = 'Hello from the mock upstream.';

interface Answer {
  status: number;
  headers: UndiciHeaders;
  body: any;
  text: string;
}

async function until<T>(
  read: () => Promise<T | undefined | false> | T | undefined | false,
  what: () => string,
  timeoutMs = 5_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not met in time: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describeE2E('gateway: configs (routing, retries, timeouts, circuit breakers)', () => {
  let t: TestApp;
  let a: MockServer;
  let b: MockServer;
  let c: MockServer;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let workspaceKey: string;
  let otherKey: string;
  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;

  /** A target on one mock, with a key of its own so the upstream request shows who sent it. */
  const target = (mock: MockServer, extra: Record<string, unknown> = {}) => ({
    provider: 'openai',
    api_key: `sk-${mock === a ? 'a' : mock === b ? 'b' : 'c'}-target-key`,
    custom_host: `${mock.url}/v1`,
    ...extra,
  });

  /** An inline config, checked by the configs library first so a bad fixture fails here, not later. */
  const inline = (config: Record<string, unknown>) => {
    validateConfig(config);
    return JSON.stringify(config);
  };

  async function storedConfig(config: Record<string, unknown>, workspace = workspaceId) {
    validateConfig(config);
    const response = await t.request('POST', '/v1/configs', {
      body: { name: unique('Routing'), config, workspace_id: workspace },
    });
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body.data as { id: string; slug: string };
  }

  async function send(
    configHeader: string,
    options: { body?: Record<string, unknown>; headers?: Record<string, string>; key?: string } = {},
  ): Promise<Answer> {
    const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': options.key ?? workspaceKey,
        'x-gateway-config': configHeader,
        ...options.headers,
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hi' }],
        ...options.body,
      }),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // a stream or other text
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  const openaiWith = (configHeader: string) =>
    new OpenAI({
      apiKey: 'unused-by-configs-with-keys',
      baseURL: `${t.baseUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': workspaceKey, 'x-gateway-config': configHeader },
    });

  /** Every record of a trace once at least `count` arrived (GET /v1/logs flushes the writer). */
  async function logsOf(traceId: string, count: number) {
    let last: any[] = [];
    await until(
      async () => {
        const answer = await t.request('GET', `/v1/logs?trace_id=${traceId}`, { key: workspaceKey });
        expect(answer.status).toBe(200);
        last = answer.body.data;
        return last.length >= count;
      },
      () =>
        `${count} log records for ${traceId}, found ${last.length}: ${JSON.stringify(last.map((l) => l.metrics))}`,
    );
    return last;
  }

  const noUpstream = () => [a, b, c].reduce((sum, mock) => sum + mock.totalRequests, 0);

  beforeAll(async () => {
    [a, b, c] = await Promise.all([startOpenAIMock(), startOpenAIMock(), startOpenAIMock()]);
    t = await startTestApp({}, undefined, { listen: true });
    const workspace = await t.request('POST', '/v1/admin/workspaces', {
      body: { name: unique('Routing W') },
    });
    expect(workspace.status).toBe(200);
    workspaceId = workspace.body.id;
    const other = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique('Routing W2') } });
    expect(other.status).toBe(200);
    otherWorkspaceId = other.body.id;
    const key = async (workspace: string) => {
      const created = await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: unique('routing key'), workspace_id: workspace, scopes: WORKSPACE_SCOPES },
      });
      expect(created.status).toBe(200);
      return created.body.key as string;
    };
    workspaceKey = await key(workspaceId);
    otherKey = await key(otherWorkspaceId);
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([a, b, c].map((mock) => mock?.close()));
    if (process.env.REDIS_URL && workspaceId) {
      // Breaker state of this suite's workspace (keys are scoped by workspace and config).
      const redis = new Redis(process.env.REDIS_URL);
      const keys = await redis.keys(`${BREAKER_KEY_PREFIX}${workspaceId}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  beforeEach(() => {
    for (const mock of [a, b, c]) mock.reset();
  });

  describe('fallback', () => {
    const chain = () => ({ strategy: { mode: 'fallback' }, targets: [target(a), target(b), target(c)] });

    it('a chain of three rescues the request (503, 500, then 200); headers and logs show each attempt', async () => {
      a.failNext(1, { status: 503 });
      b.failNext(1, { status: 500 });
      const traceId = unique('trace-fallback');
      const answer = await send(inline(chain()), { headers: { 'x-gateway-trace-id': traceId } });
      expect(answer.status).toBe(200);
      expect(answer.body.choices[0].message.content).toBe(MOCK_TEXT);
      expect(answer.headers.get('x-gateway-target-index')).toBe('targets[2]');
      expect(answer.headers.get('x-gateway-retry-count')).toBe('0');
      expect([a.requests.length, b.requests.length, c.requests.length]).toEqual([1, 1, 1]);
      expect(a.requests[0].headers.authorization).toBe('Bearer sk-a-target-key');
      expect(b.requests[0].headers.authorization).toBe('Bearer sk-b-target-key');
      expect(c.requests[0].headers.authorization).toBe('Bearer sk-c-target-key');

      const records = await logsOf(traceId, 3);
      expect(records).toHaveLength(3);
      const byStatus = [...records].sort(
        (x, y) => x.metrics.response_status_code - y.metrics.response_status_code,
      );
      expect(byStatus.map((record) => record.metrics.response_status_code)).toEqual([200, 500, 503]);
      for (const record of records)
        expect(record.metrics).toMatchObject({ ai_org: 'openai', trace_id: traceId, retry_count: 0 });
      expect(byStatus[0].metrics).toMatchObject({ is_success: true, total_units: 18 });
      expect(byStatus[0].metrics.cost).toBeGreaterThan(0);
      expect(byStatus[1].metrics.is_success).toBe(false);
      expect(byStatus[2].metrics.is_success).toBe(false);
    });

    it('works the same with a stored config named by slug, whose id the log records', async () => {
      const stored = await storedConfig(chain());
      a.failNext(1, { status: 503 });
      b.failNext(1, { status: 500 });
      const traceId = unique('trace-stored');
      const answer = await send(stored.slug, { headers: { 'x-gateway-trace-id': traceId } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-gateway-target-index')).toBe('targets[2]');
      expect([a.requests.length, b.requests.length, c.requests.length]).toEqual([1, 1, 1]);
      const records = await logsOf(traceId, 3);
      for (const record of records) expect([stored.id, stored.slug]).toContain(record.metrics.config_id);
    });

    it('a dropped connection is a failure the fallback moves past', async () => {
      a.injectFault({ drop: 'before-headers' });
      const answer = await send(inline({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] }));
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-gateway-target-index')).toBe('targets[1]');
      expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
    });

    it('with on_status_codes only those statuses move on; another failure is the answer', async () => {
      const config = inline({
        strategy: { mode: 'fallback', on_status_codes: [503] },
        targets: [target(a), target(b)],
      });
      a.failNext(1, { status: 500, message: 'primary broke' });
      const stopped = await send(config);
      expect(stopped.status).toBe(500);
      expect(stopped.body.error.message).toContain('primary broke');
      expect(stopped.headers.get('x-gateway-target-index')).toBe('targets[0]');
      expect(b.requests).toHaveLength(0);

      a.failNext(1, { status: 503 });
      const moved = await send(config);
      expect(moved.status).toBe(200);
      expect(moved.headers.get('x-gateway-target-index')).toBe('targets[1]');
      expect(b.requests).toHaveLength(1);
    });

    it('every target failing answers the last failure', async () => {
      a.failNext(1, { status: 503 });
      b.failNext(1, { status: 502, message: 'backup down too' });
      const answer = await send(inline({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] }));
      expect(answer.status).toBe(502);
      expect(answer.body.error.message).toContain('backup down too');
      expect(answer.headers.get('x-gateway-target-index')).toBe('targets[1]');
    });
  });

  describe('loadbalance', () => {
    it('a 0.7 / 0.3 split lands within 3% of its weights over 2,000 requests', async () => {
      const config = inline({
        strategy: { mode: 'loadbalance' },
        targets: [target(a, { weight: 0.7 }), target(b, { weight: 0.3 })],
      });
      const total = 2_000;
      const batch = 100;
      const statuses = new Map<number, number>();
      const served = new Map<string, number>();
      for (let sent = 0; sent < total; sent += batch) {
        const answers = await Promise.all(Array.from({ length: batch }, () => send(config)));
        for (const answer of answers) {
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const index = answer.headers.get('x-gateway-target-index') ?? 'none';
          served.set(index, (served.get(index) ?? 0) + 1);
        }
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: total });
      expect(a.totalRequests + b.totalRequests).toBe(total);
      expect(Math.abs(a.totalRequests / total - 0.7)).toBeLessThanOrEqual(0.03);
      expect(Math.abs(b.totalRequests / total - 0.3)).toBeLessThanOrEqual(0.03);
      // The header agrees with where the requests went.
      expect(Object.fromEntries(served)).toEqual({
        'targets[0]': a.totalRequests,
        'targets[1]': b.totalRequests,
      });
    }, 120_000);

    it('weight 0 drains a target', async () => {
      const config = inline({
        strategy: { mode: 'loadbalance' },
        targets: [target(a, { weight: 1 }), target(b, { weight: 0 })],
      });
      const answers = await Promise.all(Array.from({ length: 60 }, () => send(config)));
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expect(a.totalRequests).toBe(60);
      expect(b.totalRequests).toBe(0);
    });
  });

  describe('conditional', () => {
    const config = () =>
      inline({
        strategy: {
          mode: 'conditional',
          conditions: [{ query: { 'metadata.plan': { $eq: 'paid' } }, then: 'smart' }],
          default: 'cheap',
        },
        targets: [target(a, { name: 'smart' }), target(b, { name: 'cheap' })],
      });

    it('a rule on metadata picks its target; otherwise the default', async () => {
      const paid = await send(config(), {
        headers: { 'x-gateway-metadata': JSON.stringify({ plan: 'paid' }) },
      });
      expect(paid.status).toBe(200);
      expect(paid.headers.get('x-gateway-target-index')).toBe('targets[0]');
      expect([a.requests.length, b.requests.length]).toEqual([1, 0]);

      const free = await send(config(), {
        headers: { 'x-gateway-metadata': JSON.stringify({ plan: 'free' }) },
      });
      expect(free.headers.get('x-gateway-target-index')).toBe('targets[1]');
      const none = await send(config());
      expect(none.headers.get('x-gateway-target-index')).toBe('targets[1]');
      expect([a.requests.length, b.requests.length]).toEqual([1, 2]);
    });
  });

  describe('retries', () => {
    const retrying = () =>
      inline({ targets: [target(a, { retry: { attempts: 2, on_status_codes: [429] } })] });

    it('a 429 with Retry-After: 1 is retried once the time has passed; the answer is the retry', async () => {
      a.injectFault({ status: 429, retryAfter: 1 });
      const traceId = unique('trace-retry');
      const answer = await send(retrying(), { headers: { 'x-gateway-trace-id': traceId } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-gateway-retry-count')).toBe('1');
      expect(answer.headers.get('x-gateway-target-index')).toBe('targets[0]');
      expect(a.requests.map((request) => request.status)).toEqual([429, 200]);
      // Retries of one target are one log record with its retry count.
      const records = await logsOf(traceId, 1);
      expect(records).toHaveLength(1);
      expect(records[0].metrics).toMatchObject({ response_status_code: 200, retry_count: 1 });
    });

    it('a Retry-After longer than 30 s is not waited for: the 429 comes back at once with it', async () => {
      a.injectFault({ status: 429, retryAfter: 60, message: 'come back in a minute' });
      const answer = await send(retrying());
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('60');
      expect(answer.headers.get('x-gateway-retry-count')).toBe('0');
      expect(answer.body.error.message).toContain('come back in a minute');
      expect(a.requests).toHaveLength(1);
    });

    it('statuses not listed in on_status_codes are not retried; attempts bound the retries', async () => {
      a.failNext(1, { status: 500 });
      const notListed = await send(retrying());
      expect(notListed.status).toBe(500);
      expect(a.requests).toHaveLength(1);

      a.reset();
      a.injectFault({ status: 429, retryAfter: 0, times: 5 });
      const exhausted = await send(retrying());
      expect(exhausted.status).toBe(429);
      expect(exhausted.headers.get('x-gateway-retry-count')).toBe('2');
      expect(a.requests).toHaveLength(3);
    });
  });

  describe('request_timeout', () => {
    it('an upstream slower than request_timeout is aborted and answered 408 in the error envelope', async () => {
      a.injectFault({ delayMs: 5_000 });
      const answer = await send(inline({ ...target(a), request_timeout: 300 }));
      expect(answer.status).toBe(408);
      expect(answer.body).toEqual({
        error: { message: expect.any(String), type: 'timeout_error', param: null, code: 'request_timeout' },
      });
      expect(answer.body.error.message).toContain('300 ms');
      await until(
        () => a.requests[0]?.clientAborted,
        () => 'the gateway to abort the upstream call',
      );
    });

    it('a fallback moves past a timed-out target', async () => {
      a.injectFault({ delayMs: 5_000 });
      const answer = await send(
        inline({
          strategy: { mode: 'fallback' },
          targets: [target(a, { request_timeout: 300 }), target(b)],
        }),
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-gateway-target-index')).toBe('targets[1]');
      expect(b.requests).toHaveLength(1);
    });
  });

  describe('circuit breaker', () => {
    it('opens after the threshold (the failing target sees no more requests) and closes after the cooldown', async () => {
      const stored = await storedConfig({
        strategy: { mode: 'fallback', cb_config: { failure_threshold: 2, cooldown_interval: 1_500 } },
        targets: [target(a), target(b)],
      });
      a.setFault({ status: 503 });
      for (let i = 0; i < 2; i += 1) {
        const answer = await send(stored.slug);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('x-gateway-target-index')).toBe('targets[1]');
      }
      expect(a.requests).toHaveLength(2);

      // Open: the failing target is skipped, the backup answers.
      for (let i = 0; i < 3; i += 1) {
        const answer = await send(stored.slug);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('x-gateway-target-index')).toBe('targets[1]');
      }
      expect(a.requests).toHaveLength(2);
      expect(b.requests).toHaveLength(5);

      // The primary recovers; once the cooldown has passed a request reaches it and closes the circuit.
      a.setFault(undefined);
      const recovered = await until(
        async () => {
          const answer = await send(stored.slug);
          expect(answer.status).toBe(200);
          return answer.headers.get('x-gateway-target-index') === 'targets[0]' ? answer : undefined;
        },
        () => `the circuit to close (primary saw ${a.requests.length})`,
        8_000,
      );
      expect(recovered.status).toBe(200);
      expect(a.requests).toHaveLength(3);
      const next = await send(stored.slug);
      expect(next.headers.get('x-gateway-target-index')).toBe('targets[0]');
      expect(a.requests).toHaveLength(4);
    });
  });

  describe('streams', () => {
    const pair = () => inline({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] });

    it('fall back before the first byte: the stream comes whole from the next target', async () => {
      a.failNext(1, { status: 503 });
      const { data: stream, response } = await openaiWith(pair())
        .chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hi' }],
          stream: true,
        })
        .withResponse();
      expect(response.headers.get('x-gateway-target-index')).toBe('targets[1]');
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe(MOCK_TEXT);
      expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
    });

    it('never fall back after the first byte reached the client', async () => {
      // The first chunks go out, then the upstream connection is cut.
      a.injectFault({ drop: 'mid-body', chunkDelayMs: 50 });
      const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': workspaceKey,
          'x-gateway-config': pair(),
        },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hi' }],
          stream: true,
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-target-index')).toBe('targets[0]');
      let received = '';
      try {
        const reader = response.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          received += new TextDecoder().decode(value);
        }
      } catch {
        // The gateway may end the client stream abruptly too; what matters is what was sent.
      }
      expect(received).toMatch(/^data: \{/);
      await a.requests[0].done;
      expect(a.requests[0].droppedByMock).toBe(true);
      expect(b.requests).toHaveLength(0);
    });
  });

  describe('config errors', () => {
    it('an invalid inline config is AB01 naming the path of the bad field, and nothing is called', async () => {
      const answer = await send(
        JSON.stringify({
          strategy: { mode: 'fallback' },
          targets: [target(a), target(b, { retry: { attempts: 9 } })],
        }),
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({
        code: 'AB01',
        type: 'invalid_request_error',
        param: 'targets[1].retry.attempts',
      });
      expect(answer.body.error.message).toContain('targets[1].retry.attempts must be at most 5');
      expect(noUpstream()).toBe(0);
    });

    it('an unknown field of a target is AB01 naming it', async () => {
      const answer = await send(JSON.stringify({ targets: [target(a, { colour: 'red' })] }));
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'AB01', param: 'targets[0].colour' });
      expect(noUpstream()).toBe(0);
    });

    it('a stored config of another workspace is 404 config_not_found', async () => {
      const theirs = await storedConfig({ ...target(a) }, otherWorkspaceId);
      const answer = await send(theirs.slug);
      expect(answer.status).toBe(404);
      expect(answer.body.error).toMatchObject({ code: 'config_not_found', param: 'x-gateway-config' });
      // Its own workspace may use it.
      const own = await send(theirs.slug, { key: otherKey });
      expect(own.status).toBe(200);
      expect(noUpstream()).toBe(1);
    });
  });

  it("a config's api_key and anthropic_beta reach the provider call as its headers", async () => {
    const anthropic = await startAnthropicMock();
    try {
      const config = {
        provider: 'anthropic',
        api_key: 'sk-ant-config',
        custom_host: `${anthropic.url}/v1`,
        anthropic_beta: 'prompt-caching-2024-07-31',
      };
      const answer = await send(JSON.stringify(config), {
        body: { model: 'claude-3-5-haiku-latest', max_tokens: 16 },
      });
      expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
      expect(answer.body.object).toBe('chat.completion');
      expect(anthropic.requests).toHaveLength(1);
      expect(anthropic.requests[0].headers).toMatchObject({
        'x-api-key': 'sk-ant-config',
        'anthropic-beta': 'prompt-caching-2024-07-31',
      });
    } finally {
      await anthropic.close();
    }
  });
});
