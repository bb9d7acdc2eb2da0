import { EventEmitter } from 'node:events';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpstreamRequest } from '@switchboard/providers';
import { UpstreamCancel, UpstreamClient, splitUrl } from './upstream-client';

describe('splitUrl', () => {
  it('splits origin and path (query kept) like URL does', () => {
    for (const url of [
      'https://api.openai.com/v1/chat/completions',
      'http://127.0.0.1:8080/v1/models?limit=2',
      'https://example.test',
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/a%3Ab/converse',
    ]) {
      const parsed = new URL(url);
      expect(splitUrl(url)).toEqual({
        origin: parsed.origin,
        path: url.slice(parsed.origin.length) || '/',
      });
    }
  });

  it('drops user info from the origin, as URL does', () => {
    expect(splitUrl('http://user:secret@host.test:81/x')).toEqual({
      origin: 'http://host.test:81',
      path: '/x',
    });
  });
});

describe('UpstreamCancel', () => {
  it('aborts once, telling listeners', () => {
    const cancel = new UpstreamCancel();
    const heard = jest.fn();
    cancel.once('abort', heard);
    expect(cancel.aborted).toBe(false);
    cancel.abort();
    cancel.abort();
    expect(cancel.aborted).toBe(true);
    expect(heard).toHaveBeenCalledTimes(1);
  });
});

describe('UpstreamClient', () => {
  let server: Server;
  let origin: string;
  const client = new UpstreamClient();
  /** Per path: what the test server does with a request. */
  const routes = new Map<string, (request: IncomingMessage, response: ServerResponse) => void>();

  beforeAll(async () => {
    server = createServer((request, response) => {
      const route = routes.get(request.url ?? '');
      if (route) route(request, response);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string, body = '{}'): UpstreamRequest => ({
    method: 'POST',
    url: `${origin}${path}`,
    headers: { 'content-type': 'application/json' },
    body,
  });

  it('sends the request as given and reads the answer whole', async () => {
    routes.set('/echo?x=1', (request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () =>
        response
          .writeHead(201, { 'content-type': 'application/json', 'x-seen': request.headers['content-type'] })
          .end(JSON.stringify({ method: request.method, body: text })),
      );
    });
    const response = await client.call(post('/echo?x=1', '{"model":"m"}'), new UpstreamCancel());
    expect(response.statusCode).toBe(201);
    expect(response.headers['x-seen']).toBe('application/json');
    expect(JSON.parse((await response.body.read()).toString())).toEqual({
      method: 'POST',
      body: '{"model":"m"}',
    });
  });

  it('relays a streamed answer chunk by chunk as it comes', async () => {
    let sendNext!: () => void;
    routes.set('/stream', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: 1\n\n');
      sendNext = () => response.end('data: 2\n\n');
    });
    const response = await client.call(post('/stream'));
    const seen: string[] = [];
    const relayed = response.body.relay(new EventEmitter() as never, (chunk) => {
      seen.push(chunk.toString());
      if (seen.length === 1) sendNext();
      return true;
    });
    await relayed;
    expect(seen.join('')).toBe('data: 1\n\ndata: 2\n\n');
  });

  it('rejects with undici abort error when cancelled before the answer', async () => {
    routes.set('/slow', () => undefined);
    const cancel = new UpstreamCancel();
    const call = client.call(post('/slow'), cancel);
    setTimeout(() => cancel.abort(), 20);
    await expect(call).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    expect(cancel.listenerCount('abort')).toBe(0);
  });

  it('fails the body with the signal reason when aborted mid-answer', async () => {
    routes.set('/half', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: 1\n\n');
    });
    const controller = new AbortController();
    const response = await client.call(post('/half'), controller.signal);
    const relayed = response.body.relay(new EventEmitter() as never, () => {
      controller.abort(new Error('request_timeout'));
      return true;
    });
    await expect(relayed).rejects.toThrow('request_timeout');
  });

  it('rejects at once for a signal that was already aborted, without calling', async () => {
    let called = false;
    routes.set('/never', (_request, response) => {
      called = true;
      response.end();
    });
    const cancel = new UpstreamCancel();
    cancel.abort();
    await expect(client.call(post('/never'), cancel)).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    expect(called).toBe(false);
  });

  it('rejects with the connection error when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(
      client.call({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: {} }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
