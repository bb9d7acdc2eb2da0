import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Dispatcher, errors as undiciErrors } from 'undici';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { AppError, CommonErrors, Principal, toAppError } from '@switchboard/common';
import { AuthErrors } from '@switchboard/auth';
import { computeCost, getModelPricing, tokenUsageFromOpenAI } from '@switchboard/integrations';
import { LOG_SINK, LogRecord, LogSink } from '@switchboard/observability';
import {
  GatewayRoute,
  ProviderAdapter,
  ProviderRequestError,
  RequestContext,
  Usage,
  createOpenAiSseUsageScanner,
  extractOpenAiUsage,
} from '@switchboard/providers';
import { GatewayErrors } from './gateway.errors';
import { resolveTarget } from './provider-resolution';
import { readTraceHeaders } from './request-headers';
import { validateRequestBody } from './request-validation';
import { MULTIPART_GATEWAY_ROUTES } from './route-table';
import { UpstreamClient } from './upstream-client';

export type DataPlaneRoute = GatewayRoute | 'passthrough';
type UpstreamResponse = Dispatcher.ResponseData;

/** Response headers that belong to one hop and must not be copied from the upstream. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};
const DONE = Buffer.from('data: [DONE]\n\n');
const MAX_ERROR_BODY_BYTES = 1024 * 1024;

interface Attempt {
  record: LogRecord;
  started: number;
  firstByteAt: number | null;
  usage: Usage | undefined;
  /** Captured answer text for the log, up to the configured cap. */
  responseText: string;
}

function multipartModel(raw: Buffer | undefined): string | null {
  if (!raw) return null;
  const match = /name="model"\r\n\r\n([^\r\n]{1,200})/.exec(
    raw.toString('latin1', 0, Math.min(raw.length, 64 * 1024)),
  );
  return match ? match[1] : null;
}

/**
 * The data-plane pipeline: authenticate (done by the guard, from memory), resolve the provider,
 * admit, call upstream through a pooled undici client, translate, answer, and queue one log
 * record. Nothing after the answer delays it; nothing on the way reads the database.
 */
@Injectable()
export class GatewayService implements OnApplicationShutdown {
  private readonly logger = new Logger(GatewayService.name);
  private readonly upstream = new UpstreamClient();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOG_SINK) private readonly logs: LogSink,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.upstream.close();
  }

  async handle(route: DataPlaneRoute, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const attempt = this.startAttempt(route, request);
    const abort = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.once('close', onClose);
    try {
      await this.run(route, request, reply, attempt, abort.signal);
    } catch (error) {
      this.fail(error, request, reply, attempt, abort.signal.aborted);
    } finally {
      reply.raw.off('close', onClose);
      this.finish(attempt);
    }
  }

  private startAttempt(route: DataPlaneRoute, request: FastifyRequest): Attempt {
    const principal = request.principal as Principal;
    return {
      started: performance.now(),
      firstByteAt: null,
      usage: undefined,
      responseText: '',
      record: {
        id: randomUUID(),
        requestId: String(request.id),
        traceId: request.traceId,
        spanId: null,
        parentSpanId: null,
        spanName: null,
        organisationId: principal.organisationId,
        workspaceId: principal.workspaceId,
        apiKeyId: principal.apiKey?.id ?? null,
        userId: principal.user?.id ?? null,
        provider: null,
        providerSlug: null,
        model: null,
        configId: null,
        promptId: null,
        route,
        method: request.method,
        path: request.url,
        status: 0,
        isStream: false,
        latencyMs: 0,
        ttfbMs: null,
        promptTokens: 0,
        completionTokens: 0,
        totalTokens: 0,
        cachedTokens: 0,
        reasoningTokens: 0,
        cost: null,
        cacheStatus: 'disabled',
        retryCount: 0,
        metadata: null,
        requestBody: null,
        responseBody: null,
        errorCode: null,
        errorMessage: null,
        createdAt: new Date(),
      },
    };
  }

  private async run(
    route: DataPlaneRoute,
    request: FastifyRequest,
    reply: FastifyReply,
    attempt: Attempt,
    signal: AbortSignal,
  ): Promise<void> {
    const { record } = attempt;
    const principal = request.principal as Principal;
    const trace = readTraceHeaders(request.headers);
    record.spanId = trace.spanId;
    record.parentSpanId = trace.parentSpanId;
    record.spanName = trace.spanName;
    const defaults = principal.apiKey?.defaults?.metadata as Record<string, string> | undefined;
    record.metadata = defaults || trace.metadata ? { ...defaults, ...trace.metadata } : null;

    const target = resolveTarget(request.headers);
    if (!target) {
      if (route === 'passthrough')
        throw CommonErrors.routeNotFound(request.method, request.url.split('?')[0]);
      throw GatewayErrors.noProvider();
    }
    // The wildcard route declares no permission so that a path without a provider is a plain 404.
    if (!principal.permissions.has('completions.write'))
      throw AuthErrors.missingPermission('completions.write');
    const { adapter } = target;
    record.provider = adapter.id;
    record.providerSlug = target.providerSlug;
    const adapterRoute: GatewayRoute = route === 'passthrough' ? 'openai.proxy' : route;
    if (!adapter.routes.has(adapterRoute)) {
      throw GatewayErrors.routeNotSupported(
        adapter.id,
        route === 'passthrough' ? `${request.method} ${request.url.split('?')[0]}` : route,
      );
    }

    const multipart = MULTIPART_GATEWAY_ROUTES.has(adapterRoute);
    let body: Record<string, unknown> | undefined;
    let rawBody = request.rawBody;
    if (
      !multipart &&
      route !== 'passthrough' &&
      request.body &&
      typeof request.body === 'object' &&
      !Buffer.isBuffer(request.body)
    ) {
      body = request.body as Record<string, unknown>;
      validateRequestBody(adapterRoute, body);
      let changed = false;
      let strict = trace.strictOpenAiCompliance;
      if ('strict_openai_compliance' in body) {
        strict = body.strict_openai_compliance !== false;
        delete body.strict_openai_compliance;
        changed = true;
      }
      if (target.overrideParams) {
        Object.assign(body, target.overrideParams);
        changed = true;
      }
      // The original bytes are forwarded only while they still say what the body says.
      if (changed) rawBody = undefined;
      trace.strictOpenAiCompliance = strict;
      record.model = typeof body.model === 'string' ? body.model : null;
    } else if (multipart) {
      record.model = multipartModel(rawBody);
    }
    const stream = body?.stream === true;
    record.isStream = stream;
    const cap = this.config.logBodyMaxBytes;
    if (cap > 0 && rawBody) record.requestBody = rawBody.toString('utf8', 0, Math.min(rawBody.length, cap));
    else if (cap > 0 && body) record.requestBody = JSON.stringify(body).slice(0, cap);

    const path = request.url.startsWith('/v1') ? request.url.slice(3) : request.url;
    const ctx: RequestContext = {
      route: adapterRoute,
      body,
      rawBody: multipart || route === 'passthrough' || (rawBody && body) ? rawBody : undefined,
      rawContentType: request.headers['content-type'],
      method: request.method as RequestContext['method'],
      path,
      credentials: target.credentials,
      stream,
      includeUsage: (body?.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
      strictOpenAiCompliance: trace.strictOpenAiCompliance,
    };
    const upstreamRequest = await adapter.buildRequest(ctx);
    const response = await this.upstream.call(upstreamRequest, signal);
    record.status = response.statusCode;

    if (route === 'passthrough') return this.relayExactly(response, reply, attempt);
    if (response.statusCode >= 400) return this.relayError(adapter, response, reply, attempt);
    if (stream) return this.relayStream(adapter, ctx, response, reply, attempt);
    return this.relayJson(adapter, ctx, response, reply, attempt);
  }

  /** Passthrough: status, headers and bytes exactly as received. */
  private async relayExactly(
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
  ): Promise<void> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(response.statusCode, { ...(reply.getHeaders() as Record<string, string>), ...headers });
    for await (const chunk of response.body) await this.writeChunk(raw, attempt, chunk as Buffer);
    raw.end();
  }

  private async relayError(
    adapter: ProviderAdapter,
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
  ): Promise<void> {
    const buffer = Buffer.from(await response.body.arrayBuffer());
    const text = buffer.toString('utf8', 0, Math.min(buffer.length, MAX_ERROR_BODY_BYTES));
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the adapter reads the text.
    }
    const error = adapter.transformError(response.statusCode, parsed);
    attempt.record.errorCode = error.code ?? `upstream_${response.statusCode}`;
    attempt.record.errorMessage = error.message;
    attempt.responseText = text.slice(0, this.config.logBodyMaxBytes);
    const retryAfter = response.headers['retry-after'];
    if (typeof retryAfter === 'string') reply.header('retry-after', retryAfter);
    attempt.firstByteAt = performance.now();
    await reply.status(response.statusCode).type('application/json').send({ error });
  }

  private async relayJson(
    adapter: ProviderAdapter,
    ctx: RequestContext,
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
  ): Promise<void> {
    const buffer = Buffer.from(await response.body.arrayBuffer());
    const contentType = String(response.headers['content-type'] ?? 'application/json');
    const native = adapter.isOpenAiNative(ctx.route) || adapter.isNativePassthrough?.(ctx.route) === true;
    const isJson = contentType.includes('json');
    let payload: Buffer | string = buffer;
    let answer: unknown;
    if (!native && isJson) {
      answer = adapter.transformResponse(ctx, JSON.parse(buffer.toString('utf8')));
      payload = JSON.stringify(answer);
    }
    attempt.firstByteAt = performance.now();
    await reply
      .status(response.statusCode)
      .type(native ? contentType : 'application/json')
      .send(payload);
    // Usage is read after the answer is on its way.
    if (isJson) {
      try {
        answer ??= JSON.parse(buffer.toString('utf8'));
        attempt.usage = adapter.extractUsage?.(ctx.route, answer) ?? extractOpenAiUsage(answer);
      } catch {
        attempt.usage = undefined;
      }
    }
    const cap = this.config.logBodyMaxBytes;
    if (cap > 0 && isJson)
      attempt.responseText =
        typeof payload === 'string'
          ? payload.slice(0, cap)
          : payload.toString('utf8', 0, Math.min(payload.length, cap));
  }

  private async relayStream(
    adapter: ProviderAdapter,
    ctx: RequestContext,
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
  ): Promise<void> {
    reply.hijack();
    const raw = reply.raw;
    const nativeRoute = adapter.isOpenAiNative(ctx.route);
    const passthroughRoute = adapter.isNativePassthrough?.(ctx.route) === true;
    const upstreamType = String(response.headers['content-type'] ?? '');
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      ...SSE_HEADERS,
      ...(passthroughRoute && upstreamType ? { 'content-type': upstreamType } : {}),
    });
    const write = (data: Buffer | string) => this.writeChunk(raw, attempt, data);

    if (nativeRoute || passthroughRoute) {
      const scanner = nativeRoute ? createOpenAiSseUsageScanner() : adapter.createStreamTranslator(ctx);
      for await (const chunk of response.body) {
        await write(chunk as Buffer);
        scanner.write(chunk as Uint8Array);
      }
      scanner.end();
      attempt.usage = scanner.usage();
      raw.end();
      return;
    }

    const translator = adapter.createStreamTranslator(ctx);
    for await (const chunk of response.body) {
      const objects = translator.write(chunk as Uint8Array);
      if (objects.length > 0)
        await write(objects.map((object) => `data: ${JSON.stringify(object)}\n\n`).join(''));
    }
    const tail = translator.end();
    if (tail.length > 0) await write(tail.map((object) => `data: ${JSON.stringify(object)}\n\n`).join(''));
    await write(DONE);
    attempt.usage = translator.usage();
    raw.end();
  }

  /** One chunk to the client: first-byte time, the log's capped copy, and backpressure. */
  private async writeChunk(raw: ServerResponse, attempt: Attempt, data: Buffer | string): Promise<void> {
    if (attempt.firstByteAt === null) attempt.firstByteAt = performance.now();
    const room = this.config.logBodyMaxBytes - attempt.responseText.length;
    if (room > 0)
      attempt.responseText += typeof data === 'string' ? data.slice(0, room) : data.toString('utf8', 0, room);
    if (!raw.write(data)) await new Promise((resolve) => raw.once('drain', resolve));
  }

  private fail(
    error: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
    attempt: Attempt,
    aborted: boolean,
  ): void {
    const { record } = attempt;
    let appError: AppError;
    if (error instanceof ProviderRequestError) {
      appError = new AppError(
        error.status,
        error.error.code ?? 'invalid_request',
        error.message,
        error.error.param,
      );
    } else if (aborted) {
      // The client hung up: nobody reads an answer; the record says so.
      record.status = 499;
      record.errorCode = 'client_closed_request';
      record.errorMessage = 'The client closed the connection';
      return;
    } else if (
      error instanceof undiciErrors.UndiciError ||
      (error as { code?: string }).code?.startsWith?.('E')
    ) {
      const code = (error as { code?: string }).code ?? 'error';
      appError =
        code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
          ? GatewayErrors.upstreamTimeout(record.provider ?? 'the provider')
          : GatewayErrors.upstreamUnreachable(record.provider ?? 'the provider', code);
    } else {
      appError = toAppError(error, request);
      if (appError.status >= 500)
        this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    record.status = appError.status;
    record.errorCode = appError.code;
    record.errorMessage = appError.message;
    if (reply.sent || reply.raw.headersSent) {
      // Mid-stream failure: tell the client in-band, then end the stream.
      if (!reply.raw.writableEnded) {
        reply.raw.write(`data: ${JSON.stringify(appError.toEnvelope())}\n\n`);
        reply.raw.end();
      }
      return;
    }
    if (appError.headers) reply.headers(appError.headers);
    void reply.status(appError.status).type('application/json').send(appError.toEnvelope());
  }

  private finish(attempt: Attempt): void {
    const { record } = attempt;
    const now = performance.now();
    record.latencyMs = Math.round((now - attempt.started) * 1000) / 1000;
    record.ttfbMs =
      attempt.firstByteAt === null ? null : Math.round((attempt.firstByteAt - attempt.started) * 1000) / 1000;
    if (attempt.responseText) record.responseBody = attempt.responseText;
    const usage = attempt.usage;
    if (usage) {
      record.promptTokens = usage.prompt_tokens ?? 0;
      record.completionTokens = usage.completion_tokens ?? 0;
      record.totalTokens = usage.total_tokens ?? record.promptTokens + record.completionTokens;
      record.cachedTokens = usage.prompt_tokens_details?.cached_tokens ?? 0;
      record.reasoningTokens = usage.completion_tokens_details?.reasoning_tokens ?? 0;
      if (record.provider && record.model) record.cost = this.costOf(record.provider, record.model, usage);
    }
    this.logs.enqueue(record);
  }

  /** Never throws: a pricing problem must not cost the request its log record. */
  private costOf(provider: string, model: string, usage: Usage): number | null {
    try {
      const tokens = tokenUsageFromOpenAI(usage);
      const cost = tokens ? computeCost(getModelPricing(provider, model), tokens) : null;
      return cost ? cost.amount : null;
    } catch (error) {
      this.logger.warn(`No cost for ${provider}/${model}: ${(error as Error).message}`);
      return null;
    }
  }
}
