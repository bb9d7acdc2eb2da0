/**
 * A stored provider's own limits hold when a config's routing engine picks it (issue 6, "The
 * same limits inline on API keys, providers and workspaces"; issue 5, fallback "next target on
 * an error").
 *
 * Where each expectation comes from:
 * - A provider's `rate_limits` are an inline policy of that provider: a request over them is
 *   refused with 429 `rate_limit_exceeded` naming the provider (the enforcer's message, as for
 *   the direct `@slug` path in gateway-policies).
 * - Under a config, the request's own policies are checked once before routing; each stored
 *   provider the engine tries is then checked against its own limits. A refusal fails that
 *   target like an upstream error, so a fallback serves the request from the next target
 *   (`x-gateway-target-index`), and a single target answers the refusal itself.
 * - A refused target never reaches the provider: the mock counts what arrived.
 * - A cached answer is still a request: rate limits are checked before the response cache, so a
 *   key at its rpm gets 429 even for a body the cache holds (issue 6, "Each request is matched
 *   against every active policy").
 */
import { fetch } from 'undici';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { MockServer, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

describeE2E('gateway: stored-provider limits under a config', () => {
  let t: TestApp;
  let mock: MockServer;
  let workspaceId: string;
  let workspaceKey: string;

  async function admin(method: string, url: string, body?: unknown, key?: string) {
    const response = await t.request(method, url, { body, key });
    expect({ url, status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body;
  }

  async function chat(config: unknown, key = workspaceKey) {
    const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': key,
        'x-gateway-config': JSON.stringify(config),
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

  /** A provider of the workspace over the mock's integration, with the given inline limits. */
  async function provider(slug: string, limits: Record<string, unknown>) {
    await admin(
      'POST',
      '/v1/providers',
      { name: slug, slug, integration_id: 'openai-limits', workspace_id: workspaceId, ...limits },
      workspaceKey,
    );
  }

  beforeAll(async () => {
    mock = await startOpenAIMock();
    t = await startTestApp({}, undefined, { listen: true });
    workspaceId = (await admin('POST', '/v1/admin/workspaces', { name: 'Limits W', slug: 'limits-w' })).id;
    workspaceKey = (
      await admin('POST', '/v1/api-keys/workspace/service', {
        name: 'Limits traffic',
        workspace_id: workspaceId,
        scopes: WORKSPACE_SCOPES,
      })
    ).key;
    await admin('POST', '/v1/integrations', {
      name: 'OpenAI for limits',
      slug: 'openai-limits',
      ai_provider_id: 'openai',
      key: 'sk-integration-limits-0123456789',
      configurations: { custom_host: `${mock.url}/v1` },
    });
    await admin('PUT', '/v1/integrations/openai-limits/workspaces', {
      workspaces: [{ id: workspaceId, enabled: true }],
      create_default_provider: false,
    });
    await provider('two-a-minute', { rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }] });
    await provider('spare', {});
    await provider('one-a-minute', { rate_limits: [{ type: 'requests', unit: 'rpm', value: 1 }] });
    await provider('forty-tokens', {
      usage_limits: { type: 'tokens', credit_limit: 40, periodic_reset: 'weekly' },
    });
  });

  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('a fallback moves on from a provider over its rate limit to the next target', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [{ provider: '@two-a-minute' }, { provider: '@spare' }],
    };
    const served: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const answer = await chat(config);
      expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
      served.push(String(answer.headers.get('x-gateway-target-index')));
    }
    expect(served).toEqual(['targets[0]', 'targets[0]', 'targets[1]', 'targets[1]']);
    // Every request reached the provider once: the refused target was never called.
    expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(4);
  });

  it('a single target over its rate limit answers 429 naming the provider, without calling it', async () => {
    const config = { targets: [{ provider: '@one-a-minute' }] };
    expect((await chat(config)).status).toBe(200);
    const refused = await chat(config);
    expect({ status: refused.status, body: refused.body }).toMatchObject({
      status: 429,
      body: { error: { code: 'rate_limit_exceeded', message: expect.stringContaining('one-a-minute') } },
    });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
  });

  it('the provider that served settles its budget with the tokens used, until it is exhausted (412)', async () => {
    // The mock answers 18 tokens a call: two calls leave 4 of the 40, which cannot cover the
    // third call's estimate (budget_insufficient) or, had it fitted, the fourth (budget_exhausted).
    const config = { targets: [{ provider: '@forty-tokens' }] };
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof chat>> | undefined;
    for (let i = 0; i < 6 && !refused; i += 1) {
      const answer = await chat(config);
      statuses.push(answer.status);
      if (answer.status !== 200) refused = answer;
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses.length).toBeLessThanOrEqual(4);
    expect({ status: refused?.status, body: refused?.body }).toMatchObject({
      status: 412,
      body: {
        error: {
          code: expect.stringMatching(/^budget_(exhausted|insufficient)$/),
          message: expect.stringContaining('forty-tokens'),
        },
      },
    });
  });

  it('a cache hit counts against a rate limit: at the limit, even a cached answer is 429', async () => {
    const limited = (
      await admin('POST', '/v1/api-keys/workspace/service', {
        name: 'Two a minute',
        workspace_id: workspaceId,
        scopes: WORKSPACE_SCOPES,
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 2 }],
      })
    ).key;
    const config = { cache: { mode: 'simple', max_age: 60 }, targets: [{ provider: '@spare' }] };
    const first = await chat(config, limited);
    const second = await chat(config, limited);
    const third = await chat(config, limited);
    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(third.body.error.code).toBe('rate_limit_exceeded');
    expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
  });
});
