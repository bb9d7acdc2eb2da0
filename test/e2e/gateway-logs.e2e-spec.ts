import OpenAI, { toFile } from 'openai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { fetch } from 'undici';
import { computeCost, getModelPricing, tokenUsageFromOpenAI } from '../../libs/integrations/src';
import { MockServer, startAnthropicMock, startBedrockMock, startOpenAIMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

/** The body cap of this app: small, so a test can send a body past it. */
const BODY_CAP = 2048;

async function until<T>(
  read: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 5_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeE2E('gateway log records, multipart and upstream aborts', () => {
  let t: TestApp;
  let workspaceKey: string;
  let openaiMock: MockServer;
  let anthropicMock: MockServer;
  let bedrockMock: MockServer;
  let traceSeq = 0;

  beforeAll(async () => {
    [openaiMock, anthropicMock, bedrockMock] = await Promise.all([
      startOpenAIMock(),
      startAnthropicMock(),
      startBedrockMock(),
    ]);
    t = await startTestApp({ GATEWAY_LOG_BODY_MAX_BYTES: String(BODY_CAP) }, undefined, { listen: true });
    const created = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: {
        name: 'logs',
        workspace_id: 'default',
        scopes: ['completions.write', 'logs.view', 'logs.list'],
      },
    });
    expect(created.status).toBe(200);
    workspaceKey = created.body.key;
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([openaiMock, anthropicMock, bedrockMock].map((mock) => mock?.close()));
  });

  beforeEach(() => {
    for (const mock of [openaiMock, anthropicMock, bedrockMock]) mock.reset();
  });

  const nextTrace = () => `trace-logs-${Date.now().toString(36)}-${(traceSeq += 1)}`;

  const openai = (traceId: string, extra: Record<string, string> = {}) =>
    new OpenAI({
      apiKey: 'sk-upstream',
      baseURL: `${t.baseUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': workspaceKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': `${openaiMock.url}/v1`,
        'x-gateway-trace-id': traceId,
        ...extra,
      },
    });

  /** The one record of a trace, through GET /v1/logs and then GET /v1/logs/{id}. */
  async function theLogOf(traceId: string) {
    const listed = await until(async () => {
      const answer = await t.request('GET', `/v1/logs?trace_id=${traceId}`, { key: workspaceKey });
      expect(answer.status).toBe(200);
      return answer.body.data.length > 0 ? answer : undefined;
    });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].request.body).toBeUndefined();
    const detail = await t.request('GET', `/v1/logs/${listed.body.data[0].id}`, { key: workspaceKey });
    expect(detail.status).toBe(200);
    return detail.body;
  }

  const priceOf = (model: string, usage: unknown) =>
    computeCost(getModelPricing('openai', model), tokenUsageFromOpenAI(usage)!)!.amount;

  describe('records read back through GET /v1/logs and /v1/logs/{id}', () => {
    it('a JSON call: ids, provider, model, status, tokens, catalog cost, metadata and both bodies', async () => {
      const traceId = nextTrace();
      openaiMock.setReply({ inputTokens: 21, outputTokens: 9, cachedTokens: 5, reasoningTokens: 2 });
      const answer = await openai(traceId, {
        'x-gateway-span-id': 'span-1',
        'x-gateway-parent-span-id': 'span-0',
        'x-gateway-span-name': 'greeting',
        'x-gateway-metadata': JSON.stringify({ team: 'search', release: 7 }),
      }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });

      const log = await theLogOf(traceId);
      expect(log.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(log.metrics).toMatchObject({
        id: log.id,
        request_id: expect.any(String),
        trace_id: traceId,
        span_id: 'span-1',
        parent_span_id: 'span-0',
        span_name: 'greeting',
        ai_org: 'openai',
        ai_model: 'gpt-4o-mini',
        route: 'chat.completions',
        request_method: 'POST',
        request_url: '/v1/chat/completions',
        response_status_code: 200,
        is_success: true,
        stream_mode: 0,
        req_units: 21,
        res_units: 9,
        total_units: 30,
        cached_units: 5,
        reasoning_units: 2,
        metadata: { team: 'search', release: '7' },
        error_code: null,
      });
      expect(log.metrics.request_id).not.toBe(log.id);
      expect(log.metrics.time_to_first_byte).toEqual(expect.any(Number));
      const expected = priceOf('gpt-4o-mini', answer.usage);
      expect(expected).toBeGreaterThan(0);
      expect(log.metrics.cost).toBeCloseTo(expected, 12);
      expect(log.request.body).toEqual({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(log.response.body).toEqual(JSON.parse(JSON.stringify(answer)));
    });

    it('a streamed call: stream mode, usage from the stream, time to first byte, the SSE text as body', async () => {
      const traceId = nextTrace();
      const stream = await openai(traceId).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: unknown;
      for await (const chunk of stream) usage = chunk.usage ?? usage;

      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({
        ai_model: 'gpt-4o-mini',
        response_status_code: 200,
        stream_mode: 1,
        req_units: 12,
        res_units: 6,
        total_units: 18,
      });
      expect(log.metrics.time_to_first_byte).toBeLessThanOrEqual(log.metrics.response_time + 1);
      expect(log.metrics.cost).toBeCloseTo(priceOf('gpt-4o-mini', usage), 12);
      expect(typeof log.response.body).toBe('string');
      expect(log.response.body).toMatch(/^data: \{"id":"chatcmpl-/);
      // This app caps bodies at 2 KiB, less than the whole stream.
      expect(log.response.body).toHaveLength(BODY_CAP);
    });

    it('a failed call: the upstream status, error code and message, and the upstream error body', async () => {
      const traceId = nextTrace();
      openaiMock.injectFault({ status: 429, message: 'Rate limit reached for gpt-4o-mini' });
      await expect(
        openai(traceId).chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      ).rejects.toMatchObject({ status: 429 });

      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({
        ai_org: 'openai',
        ai_model: 'gpt-4o-mini',
        response_status_code: 429,
        is_success: false,
        error_code: 'rate_limit_exceeded',
        error_message: 'Rate limit reached for gpt-4o-mini',
        total_units: 0,
        cost: null,
      });
      expect(log.response.body).toMatchObject({ error: { message: 'Rate limit reached for gpt-4o-mini' } });
    });

    it('a call refused before the upstream (bad body) is logged with its 400', async () => {
      const traceId = nextTrace();
      await expect(
        openai(traceId).chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hi' }],
          temperature: 7,
        }),
      ).rejects.toMatchObject({ status: 400 });
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({ response_status_code: 400, error_code: expect.any(String) });
      expect(openaiMock.requests).toHaveLength(0);
    });

    it('a NUL character (refused by PostgreSQL text) is stored as U+FFFD instead of losing the record', async () => {
      const traceId = nextTrace();
      await openai(traceId, {
        'x-gateway-metadata': JSON.stringify({ 'odd\u0000key': 'odd\u0000value' }),
      }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'nul \u0000 here' }],
      });
      const log = await theLogOf(traceId);
      expect(log.metrics.metadata).toEqual({ 'odd\uFFFDkey': 'odd\uFFFDvalue' });
      // In a JSON body the NUL travels escaped (six characters), which any text column takes as is.
      expect(log.request.body.messages[0].content).toBe('nul \u0000 here');
    });

    it('bodies past GATEWAY_LOG_BODY_MAX_BYTES are cut to the cap', async () => {
      const traceId = nextTrace();
      const long = 'x'.repeat(BODY_CAP * 2);
      await openai(traceId).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: long }],
      });
      const log = await theLogOf(traceId);
      // Cut mid-JSON, so it reads back as the text it is.
      expect(typeof log.request.body).toBe('string');
      expect(log.request.body).toHaveLength(BODY_CAP);
      expect(log.request.body).toBe(
        JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: long }] }).slice(
          0,
          BODY_CAP,
        ),
      );
    });
  });

  describe('multipart', () => {
    it('a raw multipart transcription is forwarded byte for byte, boundary and all', async () => {
      const boundary = '----switchboard-test-boundary-7MA4YWxkTrZu0gW';
      const audio = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 31) % 256));
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nfr\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="hello.wav"\r\n` +
            'Content-Type: audio/wav\r\n\r\n',
        ),
        audio,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const traceId = nextTrace();
      const response = await fetch(`${t.baseUrl}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'x-gateway-api-key': workspaceKey,
          'x-gateway-provider': 'openai',
          authorization: 'Bearer sk-upstream',
          'x-gateway-custom-host': `${openaiMock.url}/v1`,
          'x-gateway-trace-id': traceId,
        },
        body,
      });
      expect(response.status).toBe(200);
      const [upstream] = openaiMock.requests;
      expect(upstream.path).toBe('/v1/audio/transcriptions');
      expect(upstream.headers['content-type']).toBe(`multipart/form-data; boundary=${boundary}`);
      expect(Buffer.compare(upstream.rawBody, body)).toBe(0);
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({
        route: 'audio.transcriptions',
        ai_model: 'whisper-1',
        response_status_code: 200,
      });
    });

    it('the official client’s file upload arrives with its fields and file intact', async () => {
      const content = Buffer.from('RIFF....WAVEfmt fake audio for the transcription test');
      const answer = (await openai(nextTrace()).audio.transcriptions.create({
        model: 'whisper-1',
        file: await toFile(content, 'speech.wav', { type: 'audio/wav' }),
        language: 'en',
      })) as unknown as { text: string; mock_echo: { fields: unknown; files: unknown[] } };
      expect(answer.text).toBe('Hello from the mock upstream.');
      expect(answer.mock_echo.fields).toEqual({ model: 'whisper-1', language: 'en' });
      expect(answer.mock_echo.files).toEqual([
        {
          field: 'file',
          filename: 'speech.wav',
          contentType: 'audio/wav',
          size: content.length,
          head: content.subarray(0, 64).toString('utf8'),
        },
      ]);
      const [upstream] = openaiMock.requests;
      expect(upstream.rawBody.includes(content)).toBe(true);
    });
  });

  describe('a client that hangs up during a translated stream aborts the upstream', () => {
    async function hangUpMidStream(
      mock: MockServer,
      provider: string,
      customHost: string,
      model: string,
      extra: Record<string, string> = {},
    ): Promise<string> {
      mock.injectFault({ chunkDelayMs: 150 });
      const traceId = nextTrace();
      const controller = new AbortController();
      const response = await fetch(`${t.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': workspaceKey,
          'x-gateway-provider': provider,
          authorization: 'Bearer sk-upstream',
          'x-gateway-custom-host': customHost,
          'x-gateway-trace-id': traceId,
          ...extra,
        },
        body: JSON.stringify({
          model,
          stream: true,
          max_tokens: 200,
          messages: [{ role: 'user', content: 'Tell me a long story about the sea, please.' }],
        }),
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{/);
      controller.abort();
      await until(() => mock.requests[0]?.clientAborted);
      await mock.requests[0].done;
      return traceId;
    }

    it('Anthropic', async () => {
      const traceId = await hangUpMidStream(
        anthropicMock,
        'anthropic',
        `${anthropicMock.url}/v1`,
        'claude-sonnet-4-5',
      );
      expect(anthropicMock.requests[0].clientAborted).toBe(true);
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({
        ai_org: 'anthropic',
        response_status_code: 499,
        error_code: 'client_closed_request',
        stream_mode: 1,
      });
    });

    it('Bedrock (binary event stream)', async () => {
      const traceId = await hangUpMidStream(
        bedrockMock,
        'bedrock',
        bedrockMock.url,
        'anthropic.claude-3-haiku-20240307-v1:0',
        {
          'x-gateway-aws-access-key-id': 'AKIDEXAMPLE',
          'x-gateway-aws-secret-access-key': 'secret',
          'x-gateway-aws-region': 'us-east-1',
        },
      );
      expect(bedrockMock.requests[0].clientAborted).toBe(true);
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({ ai_org: 'bedrock', response_status_code: 499 });
    });
  });
  it('a client that stops reading a stream and then hangs up still gets its record', async () => {
    // An upstream that streams until it is stopped, and says when it can no longer write.
    const chunk = `data: ${JSON.stringify({
      id: 'chatcmpl-slow',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, delta: { content: 'x'.repeat(64 * 1024) }, finish_reason: null }],
    })}\n\n`;
    let blockedSince = 0;
    let upstreamClosed = false;
    const upstream = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        while (!response.destroyed) {
          if (!response.write(chunk)) {
            blockedSince = Date.now();
            response.once('drain', () => {
              blockedSince = 0;
              pump();
            });
            return;
          }
        }
      };
      response.on('close', () => (upstreamClosed = true));
      pump();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const traceId = nextTrace();
    const body = JSON.stringify({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { port } = new URL(t.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    try {
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.pause();
      socket.write(
        [
          'POST /v1/chat/completions HTTP/1.1',
          'host: 127.0.0.1',
          'content-type: application/json',
          `content-length: ${Buffer.byteLength(body)}`,
          `x-gateway-api-key: ${workspaceKey}`,
          'x-gateway-provider: openai',
          'authorization: Bearer sk-upstream',
          `x-gateway-custom-host: http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
          `x-gateway-trace-id: ${traceId}`,
          '',
          body,
        ].join('\r\n'),
      );
      // The client reads nothing: the gateway's writes back up, it stops reading the upstream,
      // and the upstream's writes back up in turn.
      await until(() => blockedSince > 0 && Date.now() - blockedSince > 300, 15_000);
      socket.destroy();
      await until(() => upstreamClosed);
      const log = await theLogOf(traceId);
      expect(log.metrics).toMatchObject({
        response_status_code: 499,
        error_code: 'client_closed_request',
        stream_mode: 1,
      });
    } finally {
      socket.destroy();
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});
