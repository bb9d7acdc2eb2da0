/**
 * Mock of a realtime WebSocket endpoint: OpenAI's `/v1/realtime?model=…` (Bearer key) and Azure
 * OpenAI's `/openai/realtime?api-version=…&deployment=…` (`api-key`). It records every handshake
 * and every message, and speaks enough of the protocol for a gateway test: `session.created` on
 * connect, `session.updated` for `session.update`, and for `response.create` a `response.created`,
 * text deltas and a `response.done` carrying usage. Binary messages are echoed. A client message
 * `{"type":"mock.close","code":4001,"reason":"…"}` makes the mock close with that code, and
 * `mock.drop` cuts the TCP connection without a close frame.
 */
import http, { IncomingHttpHeaders } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

export interface RealtimeHandshake {
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
}

export interface RealtimeConnection {
  handshake: RealtimeHandshake;
  /** Messages received from the gateway, in order; text decoded, binary kept as bytes. */
  received: { binary: boolean; data: string | Buffer }[];
  /** True when the mock itself closed or dropped the connection (`mock.close`, `mock.drop`). */
  closedByMock: boolean;
  /** Resolves when the connection is closed, with the code and reason of the close frame received (1006: none). */
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
}

export interface RealtimeMockOptions {
  /** Accepted OpenAI bearer key / Azure `api-key`. Anything else gets a 401 in OpenAI's error shape. */
  apiKey: string;
  /** Usage reported in each `response.done`. */
  usage?: { input: number; output: number; cached?: number; audioIn?: number; audioOut?: number };
}

export class RealtimeMock {
  readonly connections: RealtimeConnection[] = [];
  /** Handshakes refused (wrong key, wrong path), with their status. */
  readonly refused: { handshake: RealtimeHandshake; status: number }[] = [];
  private readonly server = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: { message: 'WebSocket only', type: 'invalid_request_error', param: null, code: null },
      }),
    );
  });
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly sockets = new Set<Socket>();
  private port = 0;

  constructor(private readonly options: RealtimeMockOptions) {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server.on('upgrade', (request, socket, head) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const handshake: RealtimeHandshake = {
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: request.headers,
      };
      const isOpenAi = url.pathname === '/v1/realtime';
      const isAzure = url.pathname === '/openai/realtime';
      const key = isAzure
        ? request.headers['api-key']
        : String(request.headers.authorization ?? '').replace(/^Bearer /, '');
      const status = !isOpenAi && !isAzure ? 404 : key !== this.options.apiKey ? 401 : 0;
      if (status) {
        this.refused.push({ handshake, status });
        const body = JSON.stringify({
          error: {
            message:
              status === 401 ? 'Incorrect API key provided' : `No realtime endpoint at ${url.pathname}`,
            type: 'invalid_request_error',
            param: null,
            code: status === 401 ? 'invalid_api_key' : null,
          },
        });
        socket.end(
          `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, handshake));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** `http://127.0.0.1:<port>`; OpenAI's base is `<url>/v1`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Resolves once `count` connections have been accepted. */
  async waitForConnections(count: number, timeoutMs = 5_000): Promise<RealtimeConnection[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.connections.length < count) {
      if (Date.now() > deadline)
        throw new Error(`realtime mock: ${this.connections.length} of ${count} connections`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.connections;
  }

  reset(): void {
    this.connections.length = 0;
    this.refused.length = 0;
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.socket.terminate();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(ws: WebSocket, handshake: RealtimeHandshake): void {
    let markClosed!: (close: { code: number; reason: string }) => void;
    const connection: RealtimeConnection = {
      handshake,
      received: [],
      closedByMock: false,
      closed: new Promise((resolve) => (markClosed = resolve)),
      socket: ws,
    };
    this.connections.push(connection);
    ws.on('close', (code, reason) => markClosed({ code, reason: reason.toString() }));
    ws.on('error', () => undefined);
    const send = (event: Record<string, unknown>) => ws.send(JSON.stringify(event));
    send({
      type: 'session.created',
      event_id: 'event_0',
      session: { id: 'sess_mock', model: handshake.query.model ?? handshake.query.deployment },
    });
    let counter = 0;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        connection.received.push({ binary: true, data: Buffer.from(data as Buffer) });
        ws.send(data, { binary: true });
        return;
      }
      const text = data.toString();
      connection.received.push({ binary: false, data: text });
      let event: { type?: string; code?: number; reason?: string; session?: unknown };
      try {
        event = JSON.parse(text);
      } catch {
        send({ type: 'error', error: { type: 'invalid_request_error', message: 'not JSON' } });
        return;
      }
      if (event.type === 'mock.close') {
        connection.closedByMock = true;
        ws.close(event.code ?? 1000, event.reason ?? '');
      } else if (event.type === 'mock.drop') {
        connection.closedByMock = true;
        ws.terminate();
      } else if (event.type === 'session.update') {
        send({ type: 'session.updated', event_id: `event_${++counter}`, session: event.session });
      } else if (event.type === 'response.create') {
        const usage = this.options.usage ?? { input: 10, output: 5 };
        const id = `resp_${++counter}`;
        send({
          type: 'response.created',
          event_id: `event_${++counter}`,
          response: { id, status: 'in_progress' },
        });
        for (const delta of ['Hel', 'lo!']) {
          send({
            type: 'response.output_text.delta',
            event_id: `event_${++counter}`,
            response_id: id,
            delta,
          });
        }
        send({
          type: 'response.done',
          event_id: `event_${++counter}`,
          response: {
            id,
            status: 'completed',
            usage: {
              total_tokens: usage.input + usage.output,
              input_tokens: usage.input,
              output_tokens: usage.output,
              input_token_details: {
                cached_tokens: usage.cached ?? 0,
                text_tokens: usage.input,
                audio_tokens: usage.audioIn ?? 0,
              },
              output_token_details: { text_tokens: usage.output, audio_tokens: usage.audioOut ?? 0 },
            },
          },
        });
      }
    });
  }
}
