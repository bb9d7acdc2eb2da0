/**
 * The mock upstreams are only useful if real clients accept them: the OpenAI mock is driven with
 * the official `openai` client, the others with plain fetch against their documented wire formats.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import OpenAI, { toFile } from 'openai';
import { fetch } from 'undici';
import {
  DEFAULT_REPLY,
  MockServer,
  decodeBedrockEvents,
  fakeEmbedding,
  startAnthropicMock,
  startBedrockMock,
  startCohereMock,
  startGeminiMock,
  startOpenAIMock,
} from './index';

interface SseEvent {
  event?: string;
  data: string;
}

/** A strict SSE reader: events end at a blank line, CRLF or LF. */
function parseSse(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: SseEvent = { data: '' };
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event: ')) event.event = line.slice(7);
        else if (line.startsWith('data: ')) event.data += line.slice(6);
      }
      return event;
    });
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const USER_MESSAGE = [{ role: 'user', content: 'Hello' }];
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
} as const;

describe('OpenAI mock', () => {
  let mock: MockServer;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startOpenAIMock();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0, timeout: 10_000 });
  });
  afterEach(() => mock.reset());
  afterAll(() => mock.close());

  it('answers a chat completion the official client parses, and records the request', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello' }],
      temperature: 0.2,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message.content).toBe(DEFAULT_REPLY.text);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 });

    const recorded = mock.lastRequest('/v1/chat/completions')!;
    expect(recorded.method).toBe('POST');
    expect(recorded.headers.authorization).toBe('Bearer sk-test');
    expect(recorded.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2 });
    expect(mock.totalRequests).toBe(1);
  });

  it('streams chat chunks with a usage chunk before [DONE] when include_usage is set', async () => {
    mock.setReply({ cachedTokens: 4, reasoningTokens: 2 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe(DEFAULT_REPLY.text);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({
      prompt_tokens: 12,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    });
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('stop');
  });

  it('ends a raw stream with data: [DONE] and omits usage without include_usage', async () => {
    const response = await postJson(
      `${mock.url}/v1/chat/completions`,
      { model: 'gpt-4o-mini', messages: USER_MESSAGE, stream: true },
      { authorization: 'Bearer sk-test' },
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await response.text());
    expect(events[events.length - 1].data).toBe('[DONE]');
    const payloads = events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(payloads.every((p) => !('usage' in p))).toBe(true);
  });

  it('calls a tool when the request offers tools, in JSON and in a stream', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
    });
    const call = completion.choices[0].message.tool_calls![0];
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual(
      DEFAULT_REPLY.toolArguments,
    );

    const stream = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
    });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0].message.tool_calls![0];
    expect(streamed.type === 'function' && JSON.parse(streamed.function.arguments)).toEqual(
      DEFAULT_REPLY.toolArguments,
    );
    expect(final.choices[0].finish_reason).toBe('tool_calls');
  });

  it('serves completions, embeddings (base64 by default in the client), moderations and models', async () => {
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(completion.choices[0].text).toBe(DEFAULT_REPLY.text);

    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    expect(mock.lastRequest('/v1/embeddings')!.body).toMatchObject({ encoding_format: 'base64' });
    expect(embedding.data).toHaveLength(2);
    const expected = fakeEmbedding('a', DEFAULT_REPLY.embeddingDimensions);
    embedding.data[0].embedding.forEach((value, i) => expect(value).toBeCloseTo(expected[i], 5));

    const moderation = await client.moderations.create({ input: ['a violent text', 'a calm text'] });
    expect(moderation.results.map((r) => r.flagged)).toEqual([true, false]);

    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toContain('gpt-4o-mini');
    expect((await client.models.retrieve('gpt-4o')).id).toBe('gpt-4o');
  });

  it('receives a multipart transcription intact and echoes what arrived', async () => {
    const audio = Buffer.from('RIFF....WAVEfmt fake audio bytes');
    const result: any = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(audio, 'speech.wav', { type: 'audio/wav' }),
      language: 'en',
    });
    expect(result.text).toBe(DEFAULT_REPLY.text);
    expect(result.mock_echo.fields).toMatchObject({ model: 'whisper-1', language: 'en' });
    expect(result.mock_echo.files[0]).toMatchObject({
      field: 'file',
      filename: 'speech.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
  });

  it('echoes any other path with method, query, headers and body (passthrough target)', async () => {
    const response = await fetch(`${mock.url}/v1/vector_stores/vs_1/files?limit=2&order=desc`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-custom': 'kept' },
      body: JSON.stringify({ hello: 'world' }),
    });
    const echoed: any = await response.json();
    expect(echoed).toMatchObject({
      method: 'PUT',
      path: '/v1/vector_stores/vs_1/files',
      query: { limit: '2', order: 'desc' },
      body: { hello: 'world' },
    });
    expect(echoed.headers['x-custom']).toBe('kept');
  });

  it('answers 401 in the OpenAI error shape without a key, and 400 for a bad body', async () => {
    const unauthorized = await postJson(`${mock.url}/v1/chat/completions`, {
      model: 'm',
      messages: USER_MESSAGE,
    });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ error: { code: 'invalid_api_key' } });

    await expect(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [] }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error' },
    });
  });

  it('fails the next N requests with Retry-After, then succeeds (the client retries through it)', async () => {
    mock.failNext(2, { status: 429, retryAfter: 1, headers: { 'retry-after-ms': '10' } });
    const retrying = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 2 });
    const completion = await retrying.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [USER_MESSAGE[0] as any],
    });
    expect(completion.choices[0].message.content).toBe(DEFAULT_REPLY.text);
    expect(mock.requests.map((r) => r.status)).toEqual([429, 429, 200]);

    mock.failNext(1, { status: 503, message: 'upstream overloaded', retryAfter: 7 });
    const failed = await postJson(
      `${mock.url}/v1/chat/completions`,
      { model: 'gpt-4o-mini', messages: USER_MESSAGE },
      { authorization: 'Bearer sk-test' },
    );
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('7');
    expect(await failed.json()).toMatchObject({
      error: { message: 'upstream overloaded', type: 'server_error' },
    });
  });

  it('applies a queued fault only to matching requests', async () => {
    mock.injectFault({ status: 500, match: (r) => (r.body as any)?.model === 'bad-model' });
    const good = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [USER_MESSAGE[0] as any],
    });
    expect(good.choices).toHaveLength(1);
    await expect(
      client.chat.completions.create({ model: 'bad-model', messages: [USER_MESSAGE[0] as any] }),
    ).rejects.toMatchObject({ status: 500 });
  });

  it('delays answers and stream chunks, and counts requests in flight', async () => {
    mock.setFault({ delayMs: 150 });
    const started = Date.now();
    const pending = Array.from({ length: 3 }, () =>
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [USER_MESSAGE[0] as any] }),
    );
    await mock.waitForRequests(3);
    expect(mock.inFlight).toBe(3);
    await Promise.all(pending);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(mock.maxInFlight).toBe(3);
    expect(mock.inFlight).toBe(0);

    mock.setFault({ chunkDelayMs: 40 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [USER_MESSAGE[0] as any],
      stream: true,
    });
    const arrivals: number[] = [];
    for await (const _chunk of stream) arrivals.push(Date.now());
    expect(arrivals[arrivals.length - 1] - arrivals[0]).toBeGreaterThanOrEqual(40 * (arrivals.length - 2));
  });

  it('drops the connection before the headers or in the middle of a stream', async () => {
    mock.injectFault({ drop: 'before-headers' });
    await expect(
      postJson(
        `${mock.url}/v1/chat/completions`,
        { model: 'm', messages: USER_MESSAGE },
        { authorization: 'Bearer k' },
      ),
    ).rejects.toThrow();

    mock.injectFault({ drop: 'mid-body' });
    const response = await postJson(
      `${mock.url}/v1/chat/completions`,
      { model: 'm', messages: USER_MESSAGE, stream: true },
      { authorization: 'Bearer k' },
    );
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(mock.requests.every((r) => r.droppedByMock)).toBe(true);
  });

  it('records a client that hangs up mid-stream as aborted', async () => {
    mock.setFault({ chunkDelayMs: 100 });
    const response = await postJson(
      `${mock.url}/v1/chat/completions`,
      { model: 'm', messages: USER_MESSAGE, stream: true },
      { authorization: 'Bearer k' },
    );
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    const recorded = mock.lastRequest()!;
    await recorded.done;
    expect(recorded.clientAborted).toBe(true);
    expect(mock.inFlight).toBe(0);
  });
});

describe('Anthropic mock', () => {
  let mock: MockServer;
  const headers = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
  const url = () => `${mock.url}/v1/messages`;

  beforeAll(async () => (mock = await startAnthropicMock()));
  afterEach(() => mock.reset());
  afterAll(() => mock.close());

  it('answers a message with text content and usage', async () => {
    const response = await postJson(
      url(),
      { model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Be brief', messages: USER_MESSAGE },
      headers,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: DEFAULT_REPLY.text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, output_tokens: 6 },
    });
    expect(mock.lastRequest()!.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('answers tool_use when tools are offered', async () => {
    const response = await postJson(
      url(),
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: USER_MESSAGE,
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      },
      headers,
    );
    const body: any = await response.json();
    expect(body.stop_reason).toBe('tool_use');
    expect(body.content[1]).toMatchObject({
      type: 'tool_use',
      name: 'get_weather',
      input: DEFAULT_REPLY.toolArguments,
    });
  });

  it('streams named events in upstream order, with thinking, ping and input_json_delta', async () => {
    const response = await postJson(
      url(),
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 2048,
        stream: true,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: USER_MESSAGE,
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      },
      headers,
    );
    const events = parseSse(await response.text());
    for (const event of events) expect(JSON.parse(event.data).type).toBe(event.event);
    const names = events.map((e) => e.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    const deltas = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => JSON.parse(e.data).delta);
    expect(
      deltas
        .filter((d) => d.type === 'thinking_delta')
        .map((d) => d.thinking)
        .join(''),
    ).toBe(DEFAULT_REPLY.reasoning);
    expect(deltas.some((d) => d.type === 'signature_delta')).toBe(true);
    const json = deltas
      .filter((d) => d.type === 'input_json_delta')
      .map((d) => d.partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual(DEFAULT_REPLY.toolArguments);
    const messageDelta = JSON.parse(events[events.length - 2].data);
    expect(messageDelta).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 6 } });
  });

  it('streams text_delta events that add up to the reply', async () => {
    const response = await postJson(
      url(),
      { model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: USER_MESSAGE },
      headers,
    );
    const text = parseSse(await response.text())
      .map((e) => JSON.parse(e.data))
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    expect(text).toBe(DEFAULT_REPLY.text);
  });

  it('refuses a missing version header and a system role message, and shapes injected errors', async () => {
    const noVersion = await postJson(
      url(),
      { model: 'c', max_tokens: 1, messages: USER_MESSAGE },
      { 'x-api-key': 'k' },
    );
    expect(noVersion.status).toBe(400);
    const systemRole = await postJson(
      url(),
      { model: 'c', max_tokens: 1, messages: [{ role: 'system', content: 'x' }, ...USER_MESSAGE] },
      headers,
    );
    expect(await systemRole.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });

    mock.failNext(1, { status: 529, retryAfter: 3 });
    const overloaded = await postJson(url(), { model: 'c', max_tokens: 1, messages: USER_MESSAGE }, headers);
    expect(overloaded.status).toBe(529);
    expect(overloaded.headers.get('retry-after')).toBe('3');
    expect(await overloaded.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });
});

describe('Gemini mock', () => {
  let mock: MockServer;
  const body = { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] };
  const headers = { 'x-goog-api-key': 'gemini-key' };

  beforeAll(async () => (mock = await startGeminiMock()));
  afterEach(() => mock.reset());
  afterAll(() => mock.close());

  it('answers generateContent with candidates and usageMetadata', async () => {
    const response = await postJson(
      `${mock.url}/v1beta/models/gemini-2.5-flash:generateContent`,
      body,
      headers,
    );
    expect(await response.json()).toMatchObject({
      candidates: [
        { content: { role: 'model', parts: [{ text: DEFAULT_REPLY.text }] }, finishReason: 'STOP' },
      ],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 6, totalTokenCount: 18 },
      modelVersion: 'gemini-2.5-flash',
    });
  });

  it('answers a functionCall when function declarations are offered (key in the query string)', async () => {
    const response = await postJson(`${mock.url}/v1beta/models/gemini-2.5-flash:generateContent?key=k`, {
      ...body,
      tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT' } }] }],
    });
    const answer: any = await response.json();
    expect(answer.candidates[0].content.parts[0]).toEqual({
      functionCall: { name: 'get_weather', args: DEFAULT_REPLY.toolArguments },
    });
  });

  it('streams with alt=sse as CRLF-separated data events with cumulative usage', async () => {
    const response = await postJson(
      `${mock.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      body,
      headers,
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const raw = await response.text();
    expect(raw).toContain('\r\n\r\n');
    const records = parseSse(raw).map((e) => JSON.parse(e.data));
    expect(records.map((r) => r.candidates[0].content.parts[0].text).join('')).toBe(DEFAULT_REPLY.text);
    expect(records[records.length - 1].candidates[0].finishReason).toBe('STOP');
    expect(records[records.length - 1].usageMetadata.candidatesTokenCount).toBe(6);
  });

  it('streams a JSON array without alt=sse, and serves Vertex AI publisher paths', async () => {
    const response = await postJson(
      `${mock.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent`,
      body,
      headers,
    );
    const records: any[] = JSON.parse(await response.text());
    expect(records.length).toBeGreaterThan(1);

    const vertex = await postJson(
      `${mock.url}/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent`,
      body,
      { authorization: 'Bearer ya29.token' },
    );
    expect(vertex.status).toBe(200);
  });

  it('answers Google-shaped errors', async () => {
    const noKey = await postJson(`${mock.url}/v1beta/models/gemini-2.5-flash:generateContent`, body);
    expect(noKey.status).toBe(403);
    mock.failNext(1, { status: 429 });
    const limited = await postJson(
      `${mock.url}/v1beta/models/gemini-2.5-flash:generateContent`,
      body,
      headers,
    );
    expect(await limited.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
  });
});

describe('Bedrock mock', () => {
  const credentials = { accessKeyId: 'AKIDMOCK', secretAccessKey: 'secret-mock' };
  let mock: MockServer;

  beforeAll(async () => (mock = await startBedrockMock({ credentials })));
  afterEach(() => mock.reset());
  afterAll(() => mock.close());

  /** Signs like the gateway will: SigV4 over the encoded path, service `bedrock`. */
  async function signedPost(path: string, body: unknown, secret = credentials.secretAccessKey) {
    const host = new URL(mock.url).host;
    const payload = JSON.stringify(body);
    const signer = new SignatureV4({
      credentials: { ...credentials, secretAccessKey: secret },
      region: 'us-east-1',
      service: 'bedrock',
      sha256: Sha256,
    });
    const signed = await signer.sign(
      new HttpRequest({
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        path,
        headers: { host, 'content-type': 'application/json', accept: 'application/json' },
        body: payload,
      }),
    );
    return fetch(`${mock.url}${path}`, {
      method: 'POST',
      headers: signed.headers as Record<string, string>,
      body: payload,
    });
  }

  const modelPath = `/model/${encodeURIComponent('anthropic.claude-3-5-sonnet-20240620-v1:0')}`;
  const request = {
    messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
    inferenceConfig: { maxTokens: 100 },
  };

  it('refuses an unsigned request and a wrong signature', async () => {
    const unsigned = await postJson(`${mock.url}${modelPath}/converse`, request);
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('x-amzn-errortype')).toContain('MissingAuthenticationTokenException');

    const wrong = await signedPost(`${modelPath}/converse`, request, 'not-the-secret');
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('x-amzn-errortype')).toContain('InvalidSignatureException');
  });

  it('answers converse for a correctly signed request', async () => {
    const response = await signedPost(`${modelPath}/converse`, request);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      output: { message: { role: 'assistant', content: [{ text: DEFAULT_REPLY.text }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 12, outputTokens: 6, totalTokens: 18 },
    });
    expect(mock.lastRequest()!.path).toBe(`${modelPath}/converse`);
  });

  it('streams converse-stream as binary event-stream frames, with tool use', async () => {
    const response = await signedPost(`${modelPath}/converse-stream`, {
      ...request,
      toolConfig: {
        tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }],
      },
    });
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const events = decodeBedrockEvents(new Uint8Array(await response.arrayBuffer()));
    expect(events.map((e) => e.eventType)).toEqual([
      'messageStart',
      'contentBlockStart',
      ...events.filter((e) => e.eventType === 'contentBlockDelta').map(() => 'contentBlockDelta'),
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(events[1].payload.start.toolUse.name).toBe('get_weather');
    const input = events
      .filter((e) => e.eventType === 'contentBlockDelta')
      .map((e) => e.payload.delta.toolUse.input)
      .join('');
    expect(JSON.parse(input)).toEqual(DEFAULT_REPLY.toolArguments);
    expect(events.find((e) => e.eventType === 'messageStop')!.payload.stopReason).toBe('tool_use');
    expect(events[events.length - 1].payload.usage).toEqual({
      inputTokens: 12,
      outputTokens: 6,
      totalTokens: 18,
    });
  });

  it('streams text deltas and AWS-shaped throttling errors', async () => {
    const response = await signedPost(`${modelPath}/converse-stream`, request);
    const events = decodeBedrockEvents(new Uint8Array(await response.arrayBuffer()));
    const text = events
      .filter((e) => e.eventType === 'contentBlockDelta')
      .map((e) => e.payload.delta.text)
      .join('');
    expect(text).toBe(DEFAULT_REPLY.text);

    mock.failNext(1, { status: 429, message: 'Too many requests' });
    const throttled = await signedPost(`${modelPath}/converse`, request);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('x-amzn-errortype')).toContain('ThrottlingException');
    expect(await throttled.json()).toEqual({ message: 'Too many requests' });
  });
});

describe('Cohere mock', () => {
  let mock: MockServer;
  const headers = { authorization: 'Bearer co-test' };

  beforeAll(async () => (mock = await startCohereMock()));
  afterEach(() => mock.reset());
  afterAll(() => mock.close());

  it('answers v2 chat with content and usage, and tool calls with a tool plan', async () => {
    const plain: any = await (
      await postJson(`${mock.url}/v2/chat`, { model: 'command-a-03-2025', messages: USER_MESSAGE }, headers)
    ).json();
    expect(plain).toMatchObject({
      finish_reason: 'COMPLETE',
      message: { role: 'assistant', content: [{ type: 'text', text: DEFAULT_REPLY.text }] },
      usage: { tokens: { input_tokens: 12, output_tokens: 6 } },
    });

    const tool: any = await (
      await postJson(
        `${mock.url}/v2/chat`,
        { model: 'command-a-03-2025', messages: USER_MESSAGE, tools: [WEATHER_TOOL] },
        headers,
      )
    ).json();
    expect(tool.finish_reason).toBe('TOOL_CALL');
    expect(JSON.parse(tool.message.tool_calls[0].function.arguments)).toEqual(DEFAULT_REPLY.toolArguments);
  });

  it('streams v2 chat events for text and for tool calls', async () => {
    const text = parseSse(
      await (
        await postJson(
          `${mock.url}/v2/chat`,
          { model: 'command-a-03-2025', messages: USER_MESSAGE, stream: true },
          headers,
        )
      ).text(),
    );
    expect(text.map((e) => e.event)).toEqual([
      'message-start',
      'content-start',
      ...text.filter((e) => e.event === 'content-delta').map(() => 'content-delta'),
      'content-end',
      'message-end',
    ]);
    const joined = text
      .filter((e) => e.event === 'content-delta')
      .map((e) => JSON.parse(e.data).delta.message.content.text)
      .join('');
    expect(joined).toBe(DEFAULT_REPLY.text);
    expect(JSON.parse(text[text.length - 1].data).delta.finish_reason).toBe('COMPLETE');

    const tools = parseSse(
      await (
        await postJson(
          `${mock.url}/v2/chat`,
          { model: 'command-a-03-2025', messages: USER_MESSAGE, stream: true, tools: [WEATHER_TOOL] },
          headers,
        )
      ).text(),
    );
    const names = new Set(tools.map((e) => e.event));
    expect([...names]).toEqual([
      'message-start',
      'tool-plan-delta',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-end',
      'message-end',
    ]);
    const args = tools
      .filter((e) => e.event === 'tool-call-delta')
      .map((e) => JSON.parse(e.data).delta.message.tool_calls.function.arguments)
      .join('');
    expect(JSON.parse(args)).toEqual(DEFAULT_REPLY.toolArguments);
  });

  it('serves embed and rerank', async () => {
    const embed: any = await (
      await postJson(
        `${mock.url}/v2/embed`,
        { model: 'embed-v4.0', texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'] },
        headers,
      )
    ).json();
    expect(embed.embeddings.float).toEqual([
      fakeEmbedding('a', DEFAULT_REPLY.embeddingDimensions),
      fakeEmbedding('b', DEFAULT_REPLY.embeddingDimensions),
    ]);

    const rerank: any = await (
      await postJson(
        `${mock.url}/v2/rerank`,
        {
          model: 'rerank-v3.5',
          query: 'capital of France',
          documents: ['Berlin is in Germany', 'Paris is the capital of France'],
          top_n: 1,
        },
        headers,
      )
    ).json();
    expect(rerank.results).toEqual([{ index: 1, relevance_score: 1 }]);
  });

  it('answers 401 without a token, in the Cohere error shape', async () => {
    const response = await postJson(`${mock.url}/v2/chat`, {
      model: 'command-a-03-2025',
      messages: USER_MESSAGE,
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ message: 'invalid api token' });
  });
});
