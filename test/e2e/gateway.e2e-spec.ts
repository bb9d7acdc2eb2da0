import OpenAI from 'openai';
import { fetch } from 'undici';
import {
  MockServer,
  startAnthropicMock,
  startBedrockMock,
  startCohereMock,
  startGeminiMock,
  startOpenAIMock,
} from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

describeE2E('gateway data plane', () => {
  let t: TestApp;
  let workspaceKey: string;
  let openaiMock: MockServer;
  let anthropicMock: MockServer;
  let geminiMock: MockServer;
  let bedrockMock: MockServer;
  let cohereMock: MockServer;

  const client = (provider: string, customHost: string, extra: Record<string, string> = {}) =>
    new OpenAI({
      apiKey: 'sk-upstream',
      baseURL: `${t.baseUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': workspaceKey,
        'x-gateway-provider': provider,
        'x-gateway-custom-host': customHost,
        ...extra,
      },
    });

  beforeAll(async () => {
    [openaiMock, anthropicMock, geminiMock, bedrockMock, cohereMock] = await Promise.all([
      startOpenAIMock(),
      startAnthropicMock(),
      startGeminiMock(),
      startBedrockMock(),
      startCohereMock(),
    ]);
    t = await startTestApp({}, undefined, { listen: true });
    const created = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: {
        name: 'traffic',
        workspace_id: 'default',
        scopes: ['completions.write', 'logs.view', 'logs.list'],
      },
    });
    expect(created.status).toBe(200);
    workspaceKey = created.body.key;
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all(
      [openaiMock, anthropicMock, geminiMock, bedrockMock, cohereMock].map((mock) => mock?.close()),
    );
  });

  beforeEach(() => {
    for (const mock of [openaiMock, anthropicMock, geminiMock, bedrockMock, cohereMock]) mock.reset();
  });

  describe('OpenAI with direct auth and a custom host', () => {
    it('forwards the body as sent and returns the answer as received', async () => {
      const openai = client('openai', `${openaiMock.url}/v1`);
      const answer = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(answer.object).toBe('chat.completion');
      expect(answer.choices[0].message.role).toBe('assistant');
      const [upstream] = openaiMock.requests;
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.headers.authorization).toBe('Bearer sk-upstream');
      expect(upstream.body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
      expect(upstream.headers['x-gateway-api-key']).toBeUndefined();
    });

    it('streams chunk by chunk, ends with [DONE], and honours include_usage', async () => {
      const openai = client('openai', `${openaiMock.url}/v1`);
      const stream = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.length).toBeGreaterThan(2);
      expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).not.toBe('');
    });

    it('embeddings, completions and moderations pass through', async () => {
      const openai = client('openai', `${openaiMock.url}/v1`);
      const embedding = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
      expect(embedding.data[0].embedding.length).toBeGreaterThan(0);
      const completion = await openai.completions.create({
        model: 'gpt-3.5-turbo-instruct',
        prompt: 'Say hi',
      });
      expect(completion.object).toBe('text_completion');
      const moderation = await openai.moderations.create({ input: 'hello' });
      expect(moderation.results[0]).toHaveProperty('flagged');
    });

    it('an upstream error keeps its status and message in the envelope', async () => {
      openaiMock.injectFault({ status: 429, message: 'Slow down', retryAfter: 7 });
      const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': workspaceKey,
          'x-gateway-provider': 'openai',
          authorization: 'Bearer sk-upstream',
          'x-gateway-custom-host': `${openaiMock.url}/v1`,
        },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('7');
      expect(response.headers.get('x-gateway-trace-id')).toBeTruthy();
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toContain('Slow down');
    });
  });

  describe('translated providers', () => {
    it('Anthropic: sends a Messages request and answers in the OpenAI shape', async () => {
      const openai = client('anthropic', `${anthropicMock.url}/v1`);
      const answer = await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'Hello' },
        ],
        max_tokens: 50,
      });
      expect(answer.object).toBe('chat.completion');
      expect(answer.choices[0].finish_reason).toBe('stop');
      expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
      const [upstream] = anthropicMock.requests;
      expect(upstream.path).toBe('/v1/messages');
      expect(upstream.headers['x-api-key']).toBe('sk-upstream');
      expect(upstream.body).toMatchObject({ model: 'claude-sonnet-4-5', system: 'Be brief', max_tokens: 50 });
      expect((upstream.body as { messages: unknown[] }).messages).toEqual([
        { role: 'user', content: 'Hello' },
      ]);
    });

    it('Anthropic: a stream arrives as OpenAI chunks with usage', async () => {
      const openai = client('anthropic', `${anthropicMock.url}/v1`);
      const stream = await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'Hello' }],
        max_tokens: 50,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks[0].object).toBe('chat.completion.chunk');
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('').length).toBeGreaterThan(
        0,
      );
      expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
    });

    it('Anthropic: tool calls come back as tool_calls', async () => {
      anthropicMock.setReply({ toolArguments: { city: 'Paris' } });
      const openai = client('anthropic', `${anthropicMock.url}/v1`);
      const answer = await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
        ],
      });
      expect(answer.choices[0].finish_reason).toBe('tool_calls');
      const call = answer.choices[0].message.tool_calls?.[0];
      expect(call?.type === 'function' && call.function.name).toBe('get_weather');
      expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
      expect((anthropicMock.requests[0].body as { tools: unknown[] }).tools).toHaveLength(1);
    });

    it('Gemini: generateContent and alt=sse streaming', async () => {
      const openai = client('google', `${geminiMock.url}/v1beta`);
      const answer = await openai.chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(geminiMock.requests[0].path).toContain('/models/gemini-2.5-flash:generateContent');
      const stream = await openai.chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text.length).toBeGreaterThan(0);
      expect(geminiMock.requests[1].path).toContain(':streamGenerateContent');
      expect(geminiMock.requests[1].query).toMatchObject({ alt: 'sse' });
    });

    it('Bedrock: Converse signed with SigV4, and ConverseStream decoded from the event stream', async () => {
      const openai = client('bedrock', bedrockMock.url, {
        'x-gateway-aws-access-key-id': 'AKIDEXAMPLE',
        'x-gateway-aws-secret-access-key': 'secret',
        'x-gateway-aws-region': 'us-east-1',
      });
      const answer = await openai.chat.completions.create({
        model: 'anthropic.claude-3-haiku-20240307-v1:0',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(String(bedrockMock.requests[0].headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//,
      );
      const stream = await openai.chat.completions.create({
        model: 'anthropic.claude-3-haiku-20240307-v1:0',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('').length).toBeGreaterThan(
        0,
      );
      expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    });

    it('Cohere: v2 chat', async () => {
      const openai = client('cohere', cohereMock.url);
      const answer = await openai.chat.completions.create({
        model: 'command-r-plus',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(cohereMock.requests[0].path).toBe('/v2/chat');
    });
  });

  describe('passthrough', () => {
    it('any other path is forwarded as sent and answered exactly as received', async () => {
      const response = await fetch(`${t.baseUrl}/v1/custom/thing?x=1`, {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': workspaceKey,
          'x-gateway-provider': 'openai',
          authorization: 'Bearer sk-upstream',
          'x-gateway-custom-host': `${openaiMock.url}/v1`,
        },
        body: '{"a":   1}',
      });
      expect(response.status).toBe(200);
      const upstream = openaiMock.requests[0];
      expect(upstream.method).toBe('PUT');
      expect(upstream.path).toBe('/v1/custom/thing');
      expect(upstream.rawBody?.toString()).toBe('{"a":   1}');
      const echoed = (await response.json()) as { method: string };
      expect(echoed.method).toBe('PUT');
    });

    it('an unknown path without a provider is a 404', async () => {
      const response = await t.request('GET', '/v1/not/a/route', { key: workspaceKey });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('route_not_found');
    });
  });

  describe('bad requests', () => {
    const post = (body: unknown, headers: Record<string, string> = {}, key: string | null = workspaceKey) =>
      t.request('POST', '/v1/chat/completions', {
        key,
        body,
        headers: {
          'x-gateway-provider': 'openai',
          authorization: 'Bearer sk-upstream',
          'x-gateway-custom-host': `${openaiMock.url}/v1`,
          ...headers,
        },
      });
    const valid = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] };

    it('out-of-range values are 400 naming the field, and nothing reaches the provider', async () => {
      const response = await post({ ...valid, temperature: 3 });
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('temperature');
      expect(openaiMock.requests).toHaveLength(0);
    });

    it('malformed metadata is a 400', async () => {
      const response = await post(valid, { 'x-gateway-metadata': '{nope' });
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('x-gateway-metadata');
    });

    it('an unknown provider and a missing provider are 400s', async () => {
      expect((await post(valid, { 'x-gateway-provider': 'nowhere' })).body.error.code).toBe(
        'unknown_provider',
      );
      const missing = await t.request('POST', '/v1/chat/completions', { key: workspaceKey, body: valid });
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('provider_required');
    });

    it('a route the provider cannot serve names the provider and the route', async () => {
      const response = await t.request('POST', '/v1/embeddings', {
        key: workspaceKey,
        body: { model: 'claude', input: 'x' },
        headers: { 'x-gateway-provider': 'anthropic', authorization: 'Bearer k' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toMatch(/anthropic.*embeddings/);
    });

    it('no key is 401 and an admin key (no inference capability) is 403', async () => {
      expect((await post(valid, {}, null)).status).toBe(401);
      expect((await post(valid, {}, t.adminKey)).status).toBe(403);
    });

    it('an unreachable upstream is a 502 in the envelope', async () => {
      const response = await post(valid, { 'x-gateway-custom-host': 'http://127.0.0.1:1/v1' });
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('upstream_unreachable');
    });
  });

  it('a client that hangs up aborts the upstream stream', async () => {
    openaiMock.injectFault({ chunkDelayMs: 200 });
    const controller = new AbortController();
    const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': workspaceKey,
        'x-gateway-provider': 'openai',
        authorization: 'Bearer sk-upstream',
        'x-gateway-custom-host': `${openaiMock.url}/v1`,
      },
      body: JSON.stringify({
        model: 'gpt-4o',
        stream: true,
        messages: [{ role: 'user', content: 'a long answer please' }],
      }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline && !openaiMock.requests[0]?.clientAborted)
      await new Promise((r) => setTimeout(r, 50));
    expect(openaiMock.requests[0]?.clientAborted).toBe(true);
  });
});
