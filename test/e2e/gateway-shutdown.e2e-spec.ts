import { Agent, fetch } from 'undici';
import WebSocket from 'ws';
import { MockServer, RealtimeMock, startOpenAIMock } from '../mocks';
import { TestApp, TestDatabase, createTestDatabase, describeE2E, startTestApp } from '../support/test-app';

describeE2E('gateway graceful shutdown', () => {
  let database: TestDatabase;
  let openaiMock: MockServer;
  let realtimeMock: RealtimeMock;

  beforeAll(async () => {
    database = await createTestDatabase();
    openaiMock = await startOpenAIMock();
    realtimeMock = await new RealtimeMock({ apiKey: 'sk-upstream' }).listen();
  });

  afterAll(async () => {
    await openaiMock?.close();
    await realtimeMock?.close();
    await database?.drop();
  });

  it('loses no log record: calls answered, a stream and a realtime session in flight at close are all stored', async () => {
    const traceId = `trace-shutdown-${Date.now().toString(36)}`;
    const first: TestApp = await startTestApp({}, database, { listen: true });
    const created = await first.request('POST', '/v1/api-keys/workspace/service', {
      body: {
        name: 'shutdown',
        workspace_id: 'default',
        scopes: ['completions.write', 'logs.list', 'logs.view'],
      },
    });
    expect(created.status).toBe(200);
    const key = created.body.key as string;
    const headers = {
      'content-type': 'application/json',
      'x-gateway-api-key': key,
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-upstream',
      'x-gateway-custom-host': `${openaiMock.url}/v1`,
      'x-gateway-trace-id': traceId,
    };
    // A client that would keep an idle connection for ten minutes: the close must not wait for it.
    const patient = new Agent({ keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 });
    const call = (body: Record<string, unknown>) =>
      fetch(`${first.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], ...body }),
        dispatcher: patient,
      });

    // Answered before the close, and still in the writer's queue (its timer has not fired).
    const answered = await Promise.all(Array.from({ length: 40 }, () => call({})));
    for (const response of answered) {
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }

    // A stream still running when the close starts.
    openaiMock.injectFault({ chunkDelayMs: 100 });
    const streaming = await call({ stream: true });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    await reader.read();

    // A realtime session open when the close starts.
    const session = new WebSocket(
      `${first.baseUrl.replace('http://', 'ws://')}/v1/realtime?model=gpt-4o-realtime-preview`,
      {
        headers: { ...headers, 'x-gateway-custom-host': `${realtimeMock.url}/v1` },
      },
    );
    const sessionClosed = new Promise<number>((resolve) => session.once('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => {
      session.once('open', resolve);
      session.once('error', reject);
    });

    const closing = first.close();
    let streamed = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      streamed += new TextDecoder().decode(chunk.value);
    }
    // Resolves because the server closes each connection once its answer is done.
    await closing;
    await patient.close();
    expect(await sessionClosed).toBe(1001);
    // The in-flight stream was allowed to finish.
    expect(streamed).toContain('data: [DONE]');

    const second = await startTestApp({}, database);
    try {
      const listed = await second.request('GET', `/v1/logs?trace_id=${traceId}&page_size=100`, { key });
      expect(listed.status).toBe(200);
      expect(listed.body.total).toBe(42);
      const byRoute = (route: string) =>
        listed.body.data.filter((log: { metrics: { route: string } }) => log.metrics.route === route);
      expect(byRoute('chat.completions')).toHaveLength(41);
      const streamedLog = byRoute('chat.completions').find(
        (log: { metrics: { stream_mode: number } }) => log.metrics.stream_mode === 1,
      );
      expect(streamedLog.metrics.response_status_code).toBe(200);
      const [realtime] = byRoute('realtime');
      expect(realtime.metrics.response_status_code).toBe(101);
      const detail = await second.request('GET', `/v1/logs/${realtime.id}`, { key });
      expect(detail.body.response.body.close).toEqual({
        by: 'gateway',
        code: 1001,
        reason: 'server shutting down',
      });
    } finally {
      await second.close();
    }
  });
});
