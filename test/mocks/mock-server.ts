/**
 * The shared half of every mock upstream: an HTTP server on 127.0.0.1 that records each request it
 * receives and can be told to misbehave (error status, delay, dropped connection, fail N times).
 * Provider mocks only add routes that speak their wire format and the shape of their error body.
 */
import http, { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';

/** A file part of a multipart body, recorded without its bytes so recordings stay small. */
export interface RecordedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  /** First bytes as UTF-8, enough to check that the gateway forwarded the content intact. */
  head: string;
}

export interface RecordedMultipart {
  fields: Record<string, string | string[]>;
  files: RecordedFile[];
}

export interface RecordedRequest {
  /** 1-based order of arrival. */
  seq: number;
  method: string;
  /** Path exactly as sent (still percent-encoded), without the query string. */
  path: string;
  query: Record<string, string | string[]>;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** Parsed JSON, multipart ({ fields, files }), url-encoded form, text, or undefined for other bytes. */
  body: unknown;
  /** Set when the content type said JSON but the bytes did not parse. */
  bodyError?: string;
  receivedAt: number;
  /** Status the mock answered, or undefined if it never answered (dropped, or still in flight). */
  status?: number;
  /** True when the client went away before the answer was fully written (the upstream-abort check). */
  clientAborted: boolean;
  /** True when the mock cut the connection on purpose (a `drop` fault). */
  droppedByMock: boolean;
  /** Resolves when the exchange is over, however it ended. */
  done: Promise<void>;
}

/** How a mock misbehaves for one request. Every field is optional and they combine. */
export interface Fault {
  /** Answer this status with the provider's error body instead of serving the route. */
  status?: number;
  message?: string;
  /** Provider error type or code, when the default one for the status is not what the test wants. */
  errorType?: string;
  /** Seconds (number) or an HTTP date (string) for `Retry-After`. */
  retryAfter?: number | string;
  /** Extra response headers (`retry-after-ms`, rate-limit headers...). */
  headers?: Record<string, string>;
  /** Wait this long before answering (the timeout tests). */
  delayMs?: number;
  /** Wait this long between stream chunks (the time-to-first-token and stall tests). */
  chunkDelayMs?: number;
  /**
   * `before-headers`: destroy the socket without answering.
   * `mid-body`: send the headers and part of the body (half the bytes, or half the stream chunks),
   * then destroy the socket.
   */
  drop?: 'before-headers' | 'mid-body';
}

/** Which requests a queued fault applies to: a path (exact or prefix with `*`), a pattern, or a predicate. */
export type RequestMatcher = string | RegExp | ((request: RecordedRequest) => boolean);

export interface QueuedFault extends Fault {
  /** How many matching requests this fault is used for; default 1. */
  times?: number;
  match?: RequestMatcher;
}

/** What the generative routes answer; shared so one test setting reads the same on every provider. */
export interface MockReply {
  text: string;
  /** Arguments of the tool call the mock makes when the request offers tools. */
  toolArguments: Record<string, unknown>;
  /** Reasoning text, emitted where the provider has a place for it and the request asked for it. */
  reasoning: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Vector length for embedding routes when the request does not say. */
  embeddingDimensions: number;
}

export const DEFAULT_REPLY: MockReply = {
  text: 'Hello from the mock upstream.',
  toolArguments: { location: 'Paris', unit: 'celsius' },
  reasoning: 'The user greets me; I answer briefly.',
  inputTokens: 12,
  outputTokens: 6,
  cachedTokens: 0,
  reasoningTokens: 0,
  embeddingDimensions: 8,
};

export interface ProviderError {
  body: unknown;
  headers?: Record<string, string>;
}

/** Builds the provider-shaped error body for a status. */
export type ErrorShape = (status: number, message: string, errorType?: string) => ProviderError;

export type RouteHandler = (context: MockContext) => void | Promise<void>;

export interface Route {
  /** Upper-case method, or `*` for any. */
  method: string;
  /** Exact path, or a pattern whose groups become `context.params`. Matched against the raw path. */
  path: string | RegExp;
  handler: RouteHandler;
}

export interface MockServerOptions {
  name: string;
  routes: Route[];
  errorShape: ErrorShape;
  /** Served when no route matches; default a provider-shaped 404. */
  fallback?: RouteHandler;
  /** Bodies above this size are refused with 413, so a runaway test cannot exhaust memory. */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Bound on the recording so a long benchmark-style test cannot grow it without limit. */
const MAX_RECORDED_REQUESTS = 10_000;

export class MockServer {
  readonly name: string;
  readonly requests: RecordedRequest[] = [];
  reply: MockReply = { ...DEFAULT_REPLY };

  private readonly server: http.Server;
  private readonly routes: Route[];
  readonly errorShape: ErrorShape;
  private readonly fallback?: RouteHandler;
  private readonly maxBodyBytes: number;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private faults: QueuedFault[] = [];
  private stickyFault?: Fault;
  private port = 0;
  /** Never reset: keeps ids unique across a whole run. */
  private seq = 0;
  private received = 0;
  private active = 0;
  private peak = 0;
  private closing = false;

  constructor(options: MockServerOptions) {
    this.name = options.name;
    this.routes = options.routes;
    this.errorShape = options.errorShape;
    this.fallback = options.fallback;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.server = http.createServer((req, res) => void this.handle(req, res));
    // Keep-alive like a real upstream, so the gateway's connection pool is exercised.
    this.server.keepAliveTimeout = 5_000;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** `http://127.0.0.1:<port>`, without a trailing slash or version prefix. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Requests received since start or the last reset, including ones answered with a fault. */
  get totalRequests(): number {
    return this.received;
  }

  /** Requests whose answer is not finished yet. */
  get inFlight(): number {
    return this.active;
  }

  /** Highest concurrent in-flight count seen since start or the last reset. */
  get maxInFlight(): number {
    return this.peak;
  }

  /** Overrides parts of what the generative routes answer. */
  setReply(reply: Partial<MockReply>): this {
    this.reply = { ...this.reply, ...reply };
    return this;
  }

  /** Queues a fault for the next matching request (or `times` matching requests). */
  injectFault(fault: QueuedFault): this {
    this.faults.push({ ...fault, times: fault.times ?? 1 });
    return this;
  }

  /** Fails the next `count` requests (default: 500), then answers normally again. */
  failNext(count: number, fault: Fault = { status: 500 }): this {
    return this.injectFault({ ...fault, status: fault.status ?? 500, times: count });
  }

  /** A fault applied to every request without a queued one, until cleared with `undefined`. */
  setFault(fault: Fault | undefined): this {
    this.stickyFault = fault;
    return this;
  }

  /** Forgets recorded requests, queued and sticky faults, the reply and the peak count. */
  reset(): this {
    this.requests.length = 0;
    this.faults = [];
    this.stickyFault = undefined;
    this.reply = { ...DEFAULT_REPLY };
    this.peak = this.active;
    this.received = 0;
    return this;
  }

  lastRequest(match?: RequestMatcher): RecordedRequest | undefined {
    const found = match ? this.requests.filter((r) => matches(match, r)) : this.requests;
    return found[found.length - 1];
  }

  requestsTo(match: RequestMatcher): RecordedRequest[] {
    return this.requests.filter((r) => matches(match, r));
  }

  /**
   * Resolves once `count` requests (since start or the last reset) have been received and recorded;
   * rejects after `timeoutMs`. Polls, bounded by the timeout.
   */
  async waitForRequests(count: number, timeoutMs = 5_000): Promise<RecordedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name} mock: ${this.requests.length} of ${count} requests after ${timeoutMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.requests;
  }

  /** Resolves when the server no longer listens and every connection is gone. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** A timer that `close()` cancels, so no test leaves a pending handle behind. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private nextFault(request: RecordedRequest): Fault | undefined {
    const index = this.faults.findIndex((f) => !f.match || matches(f.match, request));
    if (index < 0) return this.stickyFault;
    const fault = this.faults[index];
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.active += 1;
    this.peak = Math.max(this.peak, this.active);
    const seq = ++this.seq;
    this.received += 1;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const rawPath = (req.url ?? '/').split('?')[0];
    const request: RecordedRequest = {
      seq,
      method: req.method ?? 'GET',
      path: rawPath,
      query: queryObject(url.searchParams),
      headers: req.headers,
      rawBody: Buffer.alloc(0),
      body: undefined,
      receivedAt: Date.now(),
      clientAborted: false,
      droppedByMock: false,
      done,
    };
    res.on('close', () => {
      this.active -= 1;
      if (!res.writableFinished && !request.droppedByMock) request.clientAborted = true;
      finish();
    });

    const raw = await readBody(req, this.maxBodyBytes);
    if (raw === 'too-large') {
      this.record(request);
      this.sendError(res, request, 413, 'Request body too large');
      return;
    }
    if (raw === 'aborted') {
      request.clientAborted = true;
      this.record(request);
      return;
    }
    request.rawBody = raw;
    await parseBody(request);
    this.record(request);

    const context = new MockContext(this, request, res, this.nextFault(request));
    try {
      await this.dispatch(context);
    } catch (error) {
      if (!res.headersSent) {
        this.sendError(res, request, 500, `${this.name} mock failed: ${(error as Error).message}`);
      } else {
        request.droppedByMock = true;
        res.destroy();
      }
    }
  }

  private record(request: RecordedRequest): void {
    this.requests.push(request);
    if (this.requests.length > MAX_RECORDED_REQUESTS) this.requests.shift();
  }

  private async dispatch(context: MockContext): Promise<void> {
    const { fault, request, res } = context;
    if (fault?.delayMs) await this.sleep(fault.delayMs);
    if (this.closing || res.destroyed) return;
    if (fault?.drop === 'before-headers') {
      request.droppedByMock = true;
      res.socket?.destroy();
      return;
    }
    if (fault?.status) {
      context.error(
        fault.status,
        fault.message ?? `${this.name} mock: injected ${fault.status}`,
        fault.errorType,
      );
      return;
    }
    for (const route of this.routes) {
      if (route.method !== '*' && route.method !== request.method) continue;
      if (typeof route.path === 'string') {
        if (route.path !== request.path) continue;
        context.params = [];
      } else {
        const match = route.path.exec(request.path);
        if (!match) continue;
        context.params = match.slice(1).map((p) => (p === undefined ? '' : decodeURIComponent(p)));
      }
      await route.handler(context);
      return;
    }
    if (this.fallback) {
      await this.fallback(context);
      return;
    }
    context.error(404, `${this.name} mock: no route for ${request.method} ${request.path}`);
  }

  /** Error answer for the provider, used by contexts and for failures before a context exists. */
  sendError(res: ServerResponse, request: RecordedRequest, status: number, message: string, type?: string) {
    const shaped = this.errorShape(status, message, type);
    const body = Buffer.from(JSON.stringify(shaped.body));
    request.status = status;
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': body.length,
      ...shaped.headers,
    });
    res.end(body);
  }
}

/** One request being answered: the helpers write in the way the active fault asks for. */
export class MockContext {
  params: string[] = [];

  constructor(
    readonly server: MockServer,
    readonly request: RecordedRequest,
    readonly res: ServerResponse,
    readonly fault: Fault | undefined,
  ) {}

  get reply(): MockReply {
    return this.server.reply;
  }

  /** The parsed JSON body as an object, or an empty object when it is anything else. */
  get body(): Record<string, any> {
    const body = this.request.body;
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, any>) : {};
  }

  error(status: number, message: string, errorType?: string): void {
    const shaped = this.server.errorShape(status, message, errorType ?? this.fault?.errorType);
    this.json(status, shaped.body, shaped.headers);
  }

  json(status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.send(status, Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json', ...headers });
  }

  send(status: number, body: Buffer | string, headers: Record<string, string> = {}): void {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (this.res.destroyed) return;
    this.request.status = status;
    this.res.writeHead(status, {
      ...headers,
      ...this.faultHeaders(),
      'content-length': String(bytes.length),
    });
    if (this.fault?.drop === 'mid-body') {
      // Half the bytes, then a reset: the client sees a truncated body, not a clean end.
      this.request.droppedByMock = true;
      this.res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => this.res.destroy());
      return;
    }
    this.res.end(bytes);
  }

  /**
   * Writes a streamed answer chunk by chunk, waiting `chunkDelayMs` between chunks; stops if the
   * client goes away, and with `drop: 'mid-body'` resets the connection halfway.
   */
  async stream(
    status: number,
    headers: Record<string, string>,
    chunks: (string | Uint8Array)[],
  ): Promise<void> {
    if (this.res.destroyed) return;
    this.request.status = status;
    this.res.writeHead(status, { ...headers, ...this.faultHeaders() });
    this.res.flushHeaders();
    const dropAt = this.fault?.drop === 'mid-body' ? Math.max(1, Math.floor(chunks.length / 2)) : -1;
    const delay = this.fault?.chunkDelayMs ?? 0;
    for (let i = 0; i < chunks.length; i++) {
      if (this.res.destroyed) return;
      if (i === dropAt) {
        this.request.droppedByMock = true;
        this.res.destroy();
        return;
      }
      if (i > 0 && delay > 0) await this.server.sleep(delay);
      if (this.res.destroyed) return;
      this.res.write(chunks[i]);
    }
    this.res.end();
  }

  private faultHeaders(): Record<string, string> {
    const headers: Record<string, string> = { ...this.fault?.headers };
    if (this.fault?.retryAfter !== undefined) headers['retry-after'] = String(this.fault.retryAfter);
    return headers;
  }
}

function matches(matcher: RequestMatcher, request: RecordedRequest): boolean {
  if (typeof matcher === 'function') return matcher(request);
  if (matcher instanceof RegExp) return matcher.test(request.path);
  if (matcher.endsWith('*')) return request.path.startsWith(matcher.slice(0, -1));
  return request.path === matcher;
}

function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of params) {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else out[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: Buffer | 'too-large' | 'aborted') => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        settle('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => settle(Buffer.concat(chunks)));
    req.on('aborted', () => settle('aborted'));
    req.on('error', () => settle('aborted'));
  });
}

async function parseBody(request: RecordedRequest): Promise<void> {
  const contentType = String(request.headers['content-type'] ?? '').toLowerCase();
  const raw = request.rawBody;
  if (raw.length === 0) return;
  if (contentType.includes('json')) {
    try {
      request.body = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      request.bodyError = (error as Error).message;
    }
  } else if (contentType.startsWith('multipart/form-data')) {
    request.body = await parseMultipart(raw, String(request.headers['content-type']));
  } else if (contentType.startsWith('application/x-www-form-urlencoded')) {
    request.body = queryObject(new URLSearchParams(raw.toString('utf8')));
  } else if (contentType.startsWith('text/')) {
    request.body = raw.toString('utf8');
  }
}

/** Uses the platform's multipart parser (WHATWG Response) rather than a hand-rolled one. */
async function parseMultipart(raw: Buffer, contentType: string): Promise<RecordedMultipart | undefined> {
  try {
    const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
    const parsed: RecordedMultipart = { fields: {}, files: [] };
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') {
        const existing = parsed.fields[field];
        if (existing === undefined) parsed.fields[field] = value;
        else parsed.fields[field] = Array.isArray(existing) ? [...existing, value] : [existing, value];
      } else {
        const bytes = Buffer.from(await value.arrayBuffer());
        parsed.files.push({
          field,
          filename: value.name,
          contentType: value.type,
          size: bytes.length,
          head: bytes.subarray(0, 64).toString('utf8'),
        });
      }
    }
    return parsed;
  } catch {
    return undefined;
  }
}

/** One server-sent event with a JSON payload; `event:` only for providers that name their events. */
export function sseEvent(data: unknown, event?: string, separator = '\n\n'): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}${separator}`;
}

/** Splits text into word-sized pieces (spaces kept) so streams carry several deltas. */
export function splitText(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g);
  return pieces && pieces.length > 0 ? pieces : [text];
}

/** Splits serialized JSON into a few fragments, as providers stream tool arguments. */
export function splitJson(json: string, parts = 3): string[] {
  if (json.length <= parts) return [json];
  const size = Math.ceil(json.length / parts);
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

/** A small deterministic vector for an input, so embedding tests can compare exact values. */
export function fakeEmbedding(input: string, dimensions: number): number[] {
  let seed = 0;
  for (let i = 0; i < input.length; i++) seed = (seed * 31 + input.charCodeAt(i)) >>> 0;
  const out: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out.push(Math.round(((seed / 0xffffffff) * 2 - 1) * 1e6) / 1e6);
  }
  return out;
}

/** Counter-based ids, stable within a run, shaped like each provider's. */
export function mockId(prefix: string, request: RecordedRequest): string {
  return `${prefix}${String(request.seq).padStart(6, '0')}mock`;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
