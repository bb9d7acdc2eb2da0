import { IncomingMessage } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import WebSocket from 'ws';
import { computeCost, getModelPricing, tokenUsageFromOpenAI } from '../../libs/integrations/src';
import { RealtimeMock } from '../mocks';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

const UPSTREAM_KEY = 'sk-realtime-upstream';

interface Opened {
  ws: WebSocket;
  response: IncomingMessage;
  /** Every message the client received, in order. */
  messages: { binary: boolean; data: string | Buffer }[];
  closed: Promise<{ code: number; reason: string }>;
}

interface Refused {
  status: number;
  headers: IncomingMessage['headers'];
  body: any;
}

/** Opens a client WebSocket; resolves once open, or with the HTTP answer when the upgrade is refused. */
function connect(
  url: string,
  options: { headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<Opened | Refused> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers });
    const messages: Opened['messages'] = [];
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.once('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.on('message', (data, isBinary) =>
      messages.push({ binary: isBinary, data: isBinary ? Buffer.from(data as Buffer) : data.toString() }),
    );
    ws.once('upgrade', (response) => {
      ws.once('open', () => resolve({ ws, response, messages, closed }));
    });
    ws.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: compare the text.
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
      });
    });
    ws.once('error', (error) => {
      if (ws.readyState !== WebSocket.CLOSED) reject(error);
    });
  });
}

function opened(result: Opened | Refused): Opened {
  if (!('ws' in result)) throw new Error(`upgrade refused: ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

function refused(result: Opened | Refused): Refused {
  if ('ws' in result) {
    result.ws.terminate();
    throw new Error('the upgrade was accepted');
  }
  return result;
}

async function until<T>(read: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const json = (message: { data: string | Buffer }) => JSON.parse(String(message.data));

describeE2E('gateway realtime WebSocket proxy', () => {
  let t: TestApp;
  let mock: RealtimeMock;
  let workspaceKey: string;
  let wsUrl: string;
  let traceSeq = 0;

  beforeAll(async () => {
    mock = await new RealtimeMock({
      apiKey: UPSTREAM_KEY,
      usage: { input: 120, output: 30, cached: 20, audioIn: 40, audioOut: 10 },
    }).listen();
    t = await startTestApp({}, undefined, { listen: true });
    const created = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: {
        name: 'realtime',
        workspace_id: 'default',
        scopes: ['completions.write', 'logs.view', 'logs.list'],
      },
    });
    expect(created.status).toBe(200);
    workspaceKey = created.body.key;
    wsUrl = `${t.baseUrl.replace('http://', 'ws://')}/v1/realtime`;
  });

  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  const headers = (extra: Record<string, string> = {}) => ({
    'x-gateway-api-key': workspaceKey,
    'x-gateway-provider': 'openai',
    authorization: `Bearer ${UPSTREAM_KEY}`,
    'x-gateway-custom-host': `${mock.url}/v1`,
    ...extra,
  });
  const nextTrace = () => `trace-realtime-${Date.now().toString(36)}-${(traceSeq += 1)}`;

  async function oneLog(traceId: string) {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const listed = await t.request('GET', `/v1/logs?trace_id=${traceId}`, { key: workspaceKey });
      expect(listed.status).toBe(200);
      if (listed.body.data.length === 1) {
        const detail = await t.request('GET', `/v1/logs/${listed.body.data[0].id}`, { key: workspaceKey });
        expect(detail.status).toBe(200);
        return detail.body;
      }
      expect(listed.body.data.length).toBeLessThanOrEqual(1);
      if (Date.now() > deadline) throw new Error(`no log record for ${traceId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('relays text both ways, message by message, and the upstream handshake carries the provider key only', async () => {
    const traceId = nextTrace();
    const client = opened(
      await connect(`${wsUrl}?model=gpt-4o-realtime-preview&voice=alloy`, {
        headers: headers({ 'openai-beta': 'realtime=v1', 'x-gateway-trace-id': traceId }),
      }),
    );
    expect(client.response.headers['x-gateway-trace-id']).toBe(traceId);
    const [upstream] = await mock.waitForConnections(1);
    expect(upstream.handshake.path).toBe('/v1/realtime');
    expect(upstream.handshake.query).toEqual({ model: 'gpt-4o-realtime-preview', voice: 'alloy' });
    expect(upstream.handshake.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(upstream.handshake.headers['openai-beta']).toBe('realtime=v1');
    for (const name of Object.keys(upstream.handshake.headers)) expect(name).not.toMatch(/^x-gateway-/);

    const created = json(await until(() => client.messages[0]));
    expect(created).toMatchObject({ type: 'session.created', session: { model: 'gpt-4o-realtime-preview' } });

    client.ws.send(JSON.stringify({ type: 'session.update', session: { instructions: 'Be brief' } }));
    client.ws.send(JSON.stringify({ type: 'response.create' }));
    await until(() => client.messages.find((message) => json(message).type === 'response.done'));
    expect(client.messages.map((message) => json(message).type)).toEqual([
      'session.created',
      'session.updated',
      'response.created',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.done',
    ]);
    // Exactly the frames the client sent, in order, as text.
    expect(upstream.received).toEqual([
      {
        binary: false,
        data: JSON.stringify({ type: 'session.update', session: { instructions: 'Be brief' } }),
      },
      { binary: false, data: JSON.stringify({ type: 'response.create' }) },
    ]);
    client.ws.close(1000, 'done');
    expect(await client.closed).toEqual({ code: 1000, reason: 'done' });
  });

  it('relays binary frames as binary, byte for byte', async () => {
    const client = opened(await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, { headers: headers() }));
    const [upstream] = await mock.waitForConnections(1);
    const audio = Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 7) % 256));
    client.ws.send(audio, { binary: true });
    const echoed = await until(() => client.messages.find((message) => message.binary));
    expect(Buffer.compare(echoed.data as Buffer, audio)).toBe(0);
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0].binary).toBe(true);
    expect(Buffer.compare(upstream.received[0].data as Buffer, audio)).toBe(0);
    client.ws.close();
    await client.closed;
  });

  it('propagates close codes: the client’s to the provider, and the provider’s to the client', async () => {
    const first = opened(await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, { headers: headers() }));
    const [upstream] = await mock.waitForConnections(1);
    first.ws.close(4000, 'user hung up');
    expect(await upstream.closed).toEqual({ code: 4000, reason: 'user hung up' });
    expect(await first.closed).toEqual({ code: 4000, reason: 'user hung up' });

    const second = opened(await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, { headers: headers() }));
    await mock.waitForConnections(2);
    second.ws.send(JSON.stringify({ type: 'mock.close', code: 4001, reason: 'session expired' }));
    expect(await second.closed).toEqual({ code: 4001, reason: 'session expired' });
  });

  it('a provider that drops the connection without a close frame closes the client with 1014', async () => {
    const client = opened(await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, { headers: headers() }));
    await mock.waitForConnections(1);
    client.ws.send(JSON.stringify({ type: 'mock.drop' }));
    expect((await client.closed).code).toBe(1014);
  });

  it('a client that vanishes closes the provider side with 1001', async () => {
    const client = opened(await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, { headers: headers() }));
    const [upstream] = await mock.waitForConnections(1);
    client.ws.terminate();
    expect((await upstream.closed).code).toBe(1001);
  });

  it('browsers: the gateway key, provider and provider key as subprotocol entries, never echoed back', async () => {
    const client = opened(
      await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, {
        headers: { 'x-gateway-custom-host': `${mock.url}/v1` },
        protocols: [
          'realtime',
          `x-gateway-api-key.${workspaceKey}`,
          'x-gateway-provider.openai',
          `openai-insecure-api-key.${UPSTREAM_KEY}`,
          'openai-beta.realtime-v1',
        ],
      }),
    );
    expect(client.ws.protocol).toBe('realtime');
    const [upstream] = await mock.waitForConnections(1);
    expect(upstream.handshake.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(upstream.handshake.headers['openai-beta']).toBe('realtime=v1');
    expect(upstream.handshake.headers['sec-websocket-protocol']).toBeUndefined();
    client.ws.close();
    await client.closed;
  });

  it('Azure OpenAI: the deployment URL with api-version, and the api-key header', async () => {
    const client = opened(
      await connect(`${wsUrl}?model=my-realtime`, {
        headers: {
          'x-gateway-api-key': workspaceKey,
          'x-gateway-provider': 'azure-openai',
          authorization: `Bearer ${UPSTREAM_KEY}`,
          'x-gateway-custom-host': mock.url,
        },
      }),
    );
    const [upstream] = await mock.waitForConnections(1);
    expect(upstream.handshake.path).toBe('/openai/realtime');
    expect(upstream.handshake.query).toEqual({
      'api-version': '2024-10-01-preview',
      deployment: 'my-realtime',
    });
    expect(upstream.handshake.headers['api-key']).toBe(UPSTREAM_KEY);
    expect(upstream.handshake.headers.authorization).toBeUndefined();
    client.ws.close();
    await client.closed;
  });

  describe('refused upgrades answer HTTP errors in the envelope', () => {
    it('no gateway key is 401, an admin key is 403', async () => {
      const missing = refused(
        await connect(`${wsUrl}?model=m`, { headers: headers({ 'x-gateway-api-key': '' }) }),
      );
      expect(missing.status).toBe(401);
      expect(missing.body.error).toMatchObject({ type: expect.any(String), message: expect.any(String) });
      expect(missing.headers['x-gateway-trace-id']).toEqual(expect.any(String));
      const admin = refused(
        await connect(`${wsUrl}?model=m`, { headers: headers({ 'x-gateway-api-key': t.adminKey }) }),
      );
      expect(admin.status).toBe(403);
      expect(mock.connections).toHaveLength(0);
    });

    it('no provider, an unknown provider, and a provider without realtime are 400s', async () => {
      const none = refused(
        await connect(`${wsUrl}?model=m`, { headers: { 'x-gateway-api-key': workspaceKey } }),
      );
      expect(none.status).toBe(400);
      expect(none.body.error.param).toBe('x-gateway-provider');
      const unknown = refused(
        await connect(`${wsUrl}?model=m`, { headers: headers({ 'x-gateway-provider': 'nope' }) }),
      );
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('unknown_provider');
      const anthropic = refused(
        await connect(`${wsUrl}?model=m`, { headers: headers({ 'x-gateway-provider': 'anthropic' }) }),
      );
      expect(anthropic.status).toBe(400);
      expect(anthropic.body.error.message).toMatch(/anthropic.*realtime/);
    });

    it('a provider refusal keeps its status and message; an unreachable provider is 502', async () => {
      const traceId = nextTrace();
      const wrongKey = refused(
        await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, {
          headers: headers({ authorization: 'Bearer sk-wrong', 'x-gateway-trace-id': traceId }),
        }),
      );
      expect(wrongKey.status).toBe(401);
      expect(wrongKey.body.error.message).toBe('Incorrect API key provided');
      expect(mock.refused).toHaveLength(1);
      const log = await oneLog(traceId);
      expect(log.metrics).toMatchObject({ route: 'realtime', response_status_code: 401, ai_org: 'openai' });

      const closedPort = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const unreachable = refused(
        await connect(`${wsUrl}?model=m`, {
          headers: headers({ 'x-gateway-custom-host': `http://127.0.0.1:${closedPort}/v1` }),
        }),
      );
      expect(unreachable.status).toBe(502);
      expect(unreachable.body.error.code).toBe('upstream_unreachable');
    });

    it('a plain GET without an upgrade is 426', async () => {
      const answer = await fetch(`${t.baseUrl}/v1/realtime?model=m`, { headers: headers() });
      expect(answer.status).toBe(426);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('upgrade_required');
    });
  });

  it('one log record per session: duration, message counts, close, and usage and cost from response.done', async () => {
    const traceId = nextTrace();
    const client = opened(
      await connect(`${wsUrl}?model=gpt-4o-realtime-preview`, {
        headers: headers({
          'x-gateway-trace-id': traceId,
          'x-gateway-span-id': 'span-rt',
          'x-gateway-metadata': JSON.stringify({ feature: 'voice' }),
        }),
      }),
    );
    await mock.waitForConnections(1);
    client.ws.send(JSON.stringify({ type: 'response.create' }));
    client.ws.send(JSON.stringify({ type: 'response.create' }));
    await until(
      () => client.messages.filter((message) => json(message).type === 'response.done').length === 2,
    );
    client.ws.close(1000, 'bye');
    await client.closed;

    const log = await oneLog(traceId);
    // Two responses of 120 in (20 cached, 40 audio) and 30 out (10 audio) each.
    const usage = {
      prompt_tokens: 240,
      completion_tokens: 60,
      total_tokens: 300,
      prompt_tokens_details: { cached_tokens: 40, audio_tokens: 80 },
      completion_tokens_details: { audio_tokens: 20 },
    };
    const expectedCost = computeCost(
      getModelPricing('openai', 'gpt-4o-realtime-preview'),
      tokenUsageFromOpenAI(usage)!,
    )!;
    expect(expectedCost.amount).toBeGreaterThan(0);
    expect(log.metrics).toMatchObject({
      route: 'realtime',
      trace_id: traceId,
      span_id: 'span-rt',
      ai_org: 'openai',
      ai_model: 'gpt-4o-realtime-preview',
      response_status_code: 101,
      stream_mode: 1,
      req_units: 240,
      res_units: 60,
      total_units: 300,
      cached_units: 40,
      metadata: { feature: 'voice' },
      error_code: null,
    });
    expect(log.metrics.cost).toBeCloseTo(expectedCost.amount, 10);
    expect(log.metrics.response_time).toBeGreaterThanOrEqual(0);
    expect(log.response.body).toEqual({
      object: 'realtime.session',
      messages: { from_client: 2, from_upstream: 9 },
      bytes: { from_client: expect.any(Number), from_upstream: expect.any(Number) },
      responses: 2,
      close: { by: 'client', code: 1000, reason: 'bye' },
    });
  });

  it('an upgrade for another path is a 404 and never reaches a provider', async () => {
    const answer = refused(
      await connect(`${t.baseUrl.replace('http://', 'ws://')}/v1/not-realtime`, { headers: headers() }),
    );
    expect(answer.status).toBe(404);
    expect(mock.connections).toHaveLength(0);
  });
});
