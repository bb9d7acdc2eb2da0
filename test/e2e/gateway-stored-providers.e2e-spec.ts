/**
 * Stored providers and virtual keys through the data plane (issue 4, "Done means").
 *
 * Where each expectation comes from:
 * - `x-gateway-provider: @<slug>` and `x-gateway-virtual-key: <slug>`: docs/integrations.md
 *   (providers, virtual keys) and the spec's Authentication table.
 * - An integration's `configurations.custom_host` is the base URL its providers call
 *   (docs/integrations.md, provider-specific configuration: "every provider").
 * - Unknown slugs: 404 `provider_not_found` / `virtual_key_not_found` naming the header
 *   (GatewayErrors in libs/gateway, already answered today).
 * - Refusals: docs/integrations.md "For the gateway": `lookupProviderSlug` / `lookupVirtualKey`
 *   answer a ProviderRefusal `{ reason, status, message }` (`expired` 401,
 *   `integration_not_granted` 403) and `checkModel` a `model_not_allowed` 403. The gateway answers
 *   them as they are: the refusal's status, `error.code` = its `reason`, `error.message` = its
 *   message. The tests read the expected refusal from the directory itself.
 * - The log of a call: GET /v1/logs?trace_id= then /v1/logs/{id} (as test/e2e/gateway-logs);
 *   `metrics.virtual_key` is the stored provider's or virtual key's slug (without `@`),
 *   `metrics.cost` the catalog price (computeCost of libs/integrations, docs/integrations.md).
 */
import OpenAI from 'openai';
import { fetch } from 'undici';
import {
  ProviderDirectory,
  checkModel,
  computeCost,
  getModelPricing,
  tokenUsageFromOpenAI,
} from '../../libs/integrations/src';
import type { DirectoryLookup, ProviderRefusal, ResolvedProvider } from '../../libs/integrations/src';
import { ModelDirectory } from '../../libs/integrations/src';
import { validateConfig } from '../../libs/configs/src';
import { WORKSPACE_SCOPES } from '../support/access-matrix';
import { MockServer, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

const INTEGRATION_KEY = 'sk-integration-stored-key-0123456789';
const NARROW_KEY = 'sk-integration-narrow-key-9876543210';
const W2_KEY = 'sk-integration-w2-only-key-5555555555';
const VK_OWN_KEY = 'sk-virtual-key-own-secret-4242424242';

async function until<T>(read: () => Promise<T | undefined | false> | T | undefined | false, what: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not met in time: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeE2E('gateway: stored providers and virtual keys', () => {
  let t: TestApp;
  let openaiMock: MockServer;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let workspaceKey: string;
  let otherKey: string;
  let traceSeq = 0;
  const nextTrace = () => `trace-stored-${Date.now().toString(36)}-${(traceSeq += 1)}`;
  const directory = () => t.app.get(ProviderDirectory);

  /** POST /v1/chat/completions with a workspace key and the given provider-selecting headers. */
  async function chat(
    headers: Record<string, string>,
    body: Record<string, unknown> = {},
    key = workspaceKey,
  ) {
    const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], ...body }),
    });
    const text = await response.text();
    let json: any = text;
    try {
      json = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, headers: response.headers, body: json };
  }

  /** The one record of a trace, through GET /v1/logs and then GET /v1/logs/{id}. */
  async function theLogOf(traceId: string) {
    const listed = await until(async () => {
      const answer = await t.request('GET', `/v1/logs?trace_id=${traceId}`, { key: workspaceKey });
      expect(answer.status).toBe(200);
      return answer.body.data.length > 0 ? answer : undefined;
    }, `a log record for ${traceId}`);
    expect(listed.body.data).toHaveLength(1);
    const detail = await t.request('GET', `/v1/logs/${listed.body.data[0].id}`, { key: workspaceKey });
    expect(detail.status).toBe(200);
    return detail.body;
  }

  const refusalOf = (lookup: DirectoryLookup | Promise<DirectoryLookup>): ProviderRefusal => {
    expect(lookup).not.toBeInstanceOf(Promise);
    const value = lookup as DirectoryLookup;
    if (!value || !value.refused) throw new Error(`expected a refusal, got ${JSON.stringify(value)}`);
    return value;
  };

  async function admin(method: string, url: string, body?: unknown) {
    const response = await t.request(method, url, { body });
    expect({ url, status: response.status, body: response.body }).toMatchObject({ status: 200 });
    return response.body;
  }

  beforeAll(async () => {
    openaiMock = await startOpenAIMock();
    t = await startTestApp({}, undefined, { listen: true });
    workspaceId = (await admin('POST', '/v1/admin/workspaces', { name: 'Stored W', slug: 'stored-w' })).id;
    otherWorkspaceId = (await admin('POST', '/v1/admin/workspaces', { name: 'Stored W2', slug: 'stored-w2' }))
      .id;
    workspaceKey = (
      await admin('POST', '/v1/api-keys/workspace/service', {
        name: 'W traffic',
        workspace_id: workspaceId,
        scopes: WORKSPACE_SCOPES,
      })
    ).key;
    otherKey = (
      await admin('POST', '/v1/api-keys/workspace/service', {
        name: 'W2 traffic',
        workspace_id: otherWorkspaceId,
        scopes: WORKSPACE_SCOPES,
      })
    ).key;

    const customHost = `${openaiMock.url}/v1`;
    // The integration of the done-means: a provider key, the mock as its base URL, granted to W.
    await admin('POST', '/v1/integrations', {
      name: 'OpenAI through the mock',
      slug: 'openai-mock',
      ai_provider_id: 'openai',
      key: INTEGRATION_KEY,
      configurations: { custom_host: customHost },
    });
    const granted = await admin('PUT', '/v1/integrations/openai-mock/workspaces', {
      workspaces: [{ id: workspaceId, enabled: true }],
    });
    expect(granted.created_providers).toEqual([{ workspace_id: workspaceId, slug: 'openai-mock' }]);

    // An integration that allows one model only.
    await admin('POST', '/v1/integrations', {
      name: 'Narrow',
      slug: 'openai-narrow',
      ai_provider_id: 'openai',
      key: NARROW_KEY,
      configurations: { custom_host: customHost },
    });
    await admin('PUT', '/v1/integrations/openai-narrow/workspaces', {
      workspaces: [{ id: workspaceId, enabled: true }],
    });
    await admin('PUT', '/v1/integrations/openai-narrow/models', {
      allow_all_models: false,
      models: [{ slug: 'gpt-4o-mini', enabled: true }],
    });

    // An integration granted to W2 only, with its default provider there.
    await admin('POST', '/v1/integrations', {
      name: 'W2 only',
      slug: 'openai-w2',
      ai_provider_id: 'openai',
      key: W2_KEY,
      configurations: { custom_host: customHost },
    });
    await admin('PUT', '/v1/integrations/openai-w2/workspaces', {
      workspaces: [{ id: otherWorkspaceId, enabled: true }],
    });

    // Virtual keys of W: one pointing at the integration, one with its own key; one of W2.
    const vk = async (key: string, body: Record<string, unknown>) => {
      const response = await t.request('POST', '/v1/virtual-keys', { key, body });
      expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
    };
    await vk(workspaceKey, { name: 'VK via integration', slug: 'vk-mock', integration_id: 'openai-mock' });
    await vk(workspaceKey, {
      name: 'VK own key',
      slug: 'vk-own',
      provider: 'openai',
      key: VK_OWN_KEY,
      customHost,
    });
    await vk(otherKey, { name: 'W2 VK', slug: 'vk-w2', integration_id: 'openai-w2' });
  });

  afterAll(async () => {
    await t?.close();
    await openaiMock?.close();
  });

  beforeEach(() => openaiMock.reset());

  describe('x-gateway-provider: @<slug>', () => {
    it('sends the integration key as Bearer to its base URL; the log carries the slug and the catalog cost', async () => {
      const traceId = nextTrace();
      const openai = new OpenAI({
        apiKey: 'not-sent-upstream',
        baseURL: `${t.baseUrl}/v1`,
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': workspaceKey,
          'x-gateway-provider': '@openai-mock',
          'x-gateway-trace-id': traceId,
        },
      });
      openaiMock.setReply({ inputTokens: 120, outputTokens: 40 });
      const answer = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(answer.object).toBe('chat.completion');
      expect(openaiMock.requests).toHaveLength(1);
      const [upstream] = openaiMock.requests;
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.headers.authorization).toBe(`Bearer ${INTEGRATION_KEY}`);
      expect(upstream.headers['x-gateway-api-key']).toBeUndefined();
      expect(upstream.body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });

      const log = await theLogOf(traceId);
      const expected = computeCost(
        getModelPricing('openai', 'gpt-4o-mini'),
        tokenUsageFromOpenAI(answer.usage)!,
      )!.amount;
      expect(expected).toBeGreaterThan(0);
      expect(log.metrics).toMatchObject({
        workspace_id: workspaceId,
        ai_org: 'openai',
        ai_model: 'gpt-4o-mini',
        virtual_key: 'openai-mock',
        response_status_code: 200,
        req_units: 120,
        res_units: 40,
      });
      expect(log.metrics.cost).toBeCloseTo(expected, 12);
    });

    it('a streamed call through a stored provider is relayed and priced too', async () => {
      const traceId = nextTrace();
      const response = await chat(
        { 'x-gateway-provider': '@openai-mock', 'x-gateway-trace-id': traceId },
        { stream: true, stream_options: { include_usage: true } },
      );
      expect(response.status).toBe(200);
      expect(String(response.body)).toContain('data: [DONE]');
      expect(openaiMock.requests[0].headers.authorization).toBe(`Bearer ${INTEGRATION_KEY}`);
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({ virtual_key: 'openai-mock', stream_mode: 1, total_units: 18 });
      expect(log.metrics.cost).toBeCloseTo(
        computeCost(getModelPricing('openai', 'gpt-4o-mini'), { promptTokens: 12, completionTokens: 6 })!
          .amount,
        12,
      );
    });

    it('a slug of another workspace is 404, and nothing reaches the provider', async () => {
      // openai-w2 exists, but only in W2.
      const response = await chat({ 'x-gateway-provider': '@openai-w2' });
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: 'provider_not_found', param: 'x-gateway-provider' });
      expect(openaiMock.requests).toHaveLength(0);
    });

    it('a workspace key of W2, not granted the integration, is refused', async () => {
      const response = await chat({ 'x-gateway-provider': '@openai-mock' }, {}, otherKey);
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({ code: 'provider_not_found', param: 'x-gateway-provider' });
      expect(openaiMock.requests).toHaveLength(0);
      // W2's own provider works for W2, with W2's integration key.
      const own = await chat({ 'x-gateway-provider': '@openai-w2' }, {}, otherKey);
      expect(own.status).toBe(200);
      expect(openaiMock.requests[0].headers.authorization).toBe(`Bearer ${W2_KEY}`);
    });

    it('a model outside the integration allow-list is 403 model_not_allowed; an allowed one passes', async () => {
      const lookup = directory().lookupProviderSlug(workspaceId, 'openai-narrow') as DirectoryLookup;
      expect(lookup && !lookup.refused).toBeTruthy();
      const expected = checkModel(lookup as ResolvedProvider, 'gpt-4o')!;
      expect(expected).toMatchObject({ reason: 'model_not_allowed', status: 403 });

      const refused = await chat({ 'x-gateway-provider': '@openai-narrow' }, { model: 'gpt-4o' });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'model_not_allowed', message: expected.message });
      expect(openaiMock.requests).toHaveLength(0);

      const allowed = await chat({ 'x-gateway-provider': '@openai-narrow' }, { model: 'gpt-4o-mini' });
      expect(allowed.status).toBe(200);
      expect(openaiMock.requests[0].headers.authorization).toBe(`Bearer ${NARROW_KEY}`);
    });

    it('a provider whose integration grant was revoked is refused as not granted (403)', async () => {
      await admin('PUT', '/v1/integrations/openai-narrow/workspaces', {
        workspaces: [],
        override_existing_workspace_access: true,
      });
      const expected = refusalOf(directory().lookupProviderSlug(workspaceId, 'openai-narrow'));
      expect(expected).toMatchObject({ reason: 'integration_not_granted', status: 403 });
      const response = await chat({ 'x-gateway-provider': '@openai-narrow' });
      expect(response.status).toBe(403);
      expect(response.body.error).toMatchObject({
        code: 'integration_not_granted',
        message: expected.message,
      });
      expect(openaiMock.requests).toHaveLength(0);
    });
  });

  describe('stored providers as config targets', () => {
    it('a fallback from a virtual key to an @slug target sends each its own stored key', async () => {
      // docs/configs.md: a target's `provider` may be a stored `@slug`, or it names a `virtual_key`.
      openaiMock.failNext(1, { status: 503 });
      const config = {
        strategy: { mode: 'fallback' },
        targets: [{ virtual_key: 'vk-own' }, { provider: '@openai-mock' }],
      };
      validateConfig(config);
      const response = await chat({ 'x-gateway-config': JSON.stringify(config) });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-target-index')).toBe('targets[1]');
      expect(openaiMock.requests.map((request) => request.headers.authorization)).toEqual([
        `Bearer ${VK_OWN_KEY}`,
        `Bearer ${INTEGRATION_KEY}`,
      ]);
    });
  });

  describe('x-gateway-virtual-key', () => {
    it('a virtual key pointing at the integration sends the integration key; the log carries its slug and cost', async () => {
      const traceId = nextTrace();
      const openai = new OpenAI({
        apiKey: 'not-sent-upstream',
        baseURL: `${t.baseUrl}/v1`,
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': workspaceKey,
          'x-gateway-virtual-key': 'vk-mock',
          'x-gateway-trace-id': traceId,
        },
      });
      const answer = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(answer.choices[0].message.content).toBe('Hello from the mock upstream.');
      expect(openaiMock.requests).toHaveLength(1);
      expect(openaiMock.requests[0].headers.authorization).toBe(`Bearer ${INTEGRATION_KEY}`);
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({
        ai_org: 'openai',
        virtual_key: 'vk-mock',
        response_status_code: 200,
      });
      expect(log.metrics.cost).toBeCloseTo(
        computeCost(getModelPricing('openai', 'gpt-4o-mini'), tokenUsageFromOpenAI(answer.usage)!)!.amount,
        12,
      );
    });

    it('a virtual key with its own key and custom host sends that key', async () => {
      const response = await chat({ 'x-gateway-virtual-key': 'vk-own' });
      expect(response.status).toBe(200);
      expect(openaiMock.requests[0].headers.authorization).toBe(`Bearer ${VK_OWN_KEY}`);
    });

    it('a provider is also named by x-gateway-virtual-key (one slug space)', async () => {
      const response = await chat({ 'x-gateway-virtual-key': 'openai-mock' });
      expect(response.status).toBe(200);
      expect(openaiMock.requests[0].headers.authorization).toBe(`Bearer ${INTEGRATION_KEY}`);
    });

    it('a virtual key of another workspace is 404', async () => {
      const response = await chat({ 'x-gateway-virtual-key': 'vk-w2' });
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({
        code: 'virtual_key_not_found',
        param: 'x-gateway-virtual-key',
      });
      expect(openaiMock.requests).toHaveLength(0);
    });

    it('an expired virtual key is 401 with the refusal code, and nothing reaches the provider', async () => {
      const created = await t.request('POST', '/v1/virtual-keys', {
        key: workspaceKey,
        body: {
          name: 'Short-lived',
          slug: 'vk-expiring',
          integration_id: 'openai-mock',
          expires_at: new Date(Date.now() + 1_000).toISOString(),
        },
      });
      expect(created.status).toBe(200);
      const expected = await until(() => {
        const lookup = directory().lookupVirtualKey(workspaceId, 'vk-expiring') as DirectoryLookup;
        return lookup?.refused ? lookup : undefined;
      }, 'the virtual key to expire');
      expect(expected).toMatchObject({ reason: 'expired', status: 401 });

      const response = await chat({ 'x-gateway-virtual-key': 'vk-expiring' });
      expect(response.status).toBe(401);
      expect(response.body.error).toMatchObject({ code: 'expired', message: expected.message });
      expect(openaiMock.requests).toHaveLength(0);
    });
  });

  describe('GET /models naming no provider', () => {
    it("answers the models the caller's workspace may use, across its stored providers", async () => {
      const expected = t.app.get(ModelDirectory).listForWorkspace(workspaceId);
      expect(expected.data.length).toBeGreaterThan(0);
      expect(expected.data.map((model) => model.id)).toContain('gpt-4o-mini');

      const listed = await t.request('GET', '/v1/models', { key: workspaceKey });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual(JSON.parse(JSON.stringify(expected)));
      expect(listed.body.object).toBe('list');

      const one = await t.request('GET', '/v1/models/gpt-4o-mini', { key: workspaceKey });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: 'gpt-4o-mini', object: 'model' });

      const missing = await t.request('GET', '/v1/models/no-such-model-anywhere', { key: workspaceKey });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
      expect(openaiMock.requests).toHaveLength(0);
    });

    it('with a provider named, it still asks that provider', async () => {
      const response = await t.request('GET', '/v1/models', {
        key: workspaceKey,
        headers: { 'x-gateway-provider': '@openai-mock' },
      });
      expect(response.status).toBe(200);
      expect(openaiMock.requests.map((request) => request.path)).toEqual(['/v1/models']);
    });
  });
});
