import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { errors as undiciErrors } from 'undici';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { AppError, CommonErrors, Principal, timeOrderedId, toAppError } from '@switchboard/common';
import { AuthErrors } from '@switchboard/auth';
import {
  AttemptContext,
  AttemptOutcome,
  CachedResponse,
  ConfigRuntime,
  ConfigStore,
  LeafTarget,
  RequestConfig,
  RoutingResult,
  StreamRecorder,
  cacheKeyHeaders,
  isForceRefresh,
  retryAfterMs,
  routingHeaders,
} from '@switchboard/configs';
import {
  ModelDirectory,
  ProviderDirectory,
  ResolvedProvider,
  checkModel,
  credentialsForModel,
  pricingFor,
} from '@switchboard/integrations';
import { LOG_SINK, LogRecord, LogSink } from '@switchboard/observability';
import { EnforcementContext, InlineLimits, PolicyEnforcer, Reservation } from '@switchboard/policies';
import {
  GatewayRoute,
  ProviderAdapter,
  ProviderRequestError,
  RequestContext,
  Usage,
  createOpenAiSseUsageScanner,
  extractOpenAiUsage,
  getProviderAdapter,
} from '@switchboard/providers';
import { GatewayErrors } from './gateway.errors';
import { topLevelJsonValue } from './json-scan';
import { inlineLimitsFor, providerLimits } from './policy-context';
import { ResolvedTarget, TargetLookups, bearer, resolveTarget } from './provider-resolution';
import { drained } from './relay';
import { readTraceHeaders } from './request-headers';
import { applyTraceHeaders, completeLogRecord, newLogRecord } from './request-log';
import { validateRequestBody } from './request-validation';
import { MULTIPART_GATEWAY_ROUTES } from './route-table';
import { refusalError, storedProviderLookups } from './stored-providers';
import { UpstreamCancel, UpstreamClient, UpstreamResponse } from './upstream-client';

export type DataPlaneRoute = GatewayRoute | 'passthrough';

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
};
const DONE = Buffer.from('data: [DONE]\n\n');
const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/**
 * Takes the answer over from Fastify to write it by hand (a stream, a passthrough): the status,
 * and the headers set so far on the reply (trace id, limits, routing) under the given ones.
 */
function takeOver(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  // getHeaders() is a copy already; the given headers go onto it one by one. Two object spreads
  // here cost 14 µs of the first chunk's way out, this 6.
  const merged = reply.getHeaders() as OutgoingHttpHeaders;
  for (const name in headers) merged[name] = headers[name];
  raw.writeHead(status, merged);
  return raw;
}

/** Translated stream events as server-sent `data:` lines, in one string. */
function sseEvents(objects: readonly unknown[]): string {
  let text = '';
  for (const object of objects) text += `data: ${JSON.stringify(object)}\n\n`;
  return text;
}

interface Attempt {
  record: LogRecord;
  principal: Principal;
  started: number;
  firstByteAt: number | null;
  usage: Usage | undefined;
  /** Captured answer text for the log, up to the configured cap. */
  responseText: string;
  /** The stored provider that served the call: its pricing prices the log record. */
  stored: ResolvedProvider | undefined;
  /** The policies' hold on this request, settled (or released) when it ends. */
  reservation: Reservation | null;
  /**
   * Under a config, each stored provider the engine tried holds a reservation of its own limits;
   * the one that served is settled with the request, the others are released when routing ends.
   */
  providerHolds: ProviderHold[] | null;
  /** The hold of the provider whose answer was relayed, settled with the request's usage. */
  servedHold: ProviderHold | null;
  /** Whether a provider was called (settle) or not (release). */
  called: boolean;
  /** A streamed answer being recorded for the response cache. */
  recorder: StreamRecorder | null;
  /** The answer being relayed: its body is closed at the end if the request failed before reading it. */
  upstream: UpstreamResponse | null;
}

/** The request as read once, whichever provider ends up serving it. */
interface RequestFacts {
  route: DataPlaneRoute;
  adapterRoute: GatewayRoute;
  body: Record<string, unknown> | undefined;
  /** The bytes as received, while they still say what `body` says. */
  rawBody: Buffer | undefined;
  multipart: boolean;
  stream: boolean;
  strict: boolean;
  /** The path after `/v1`, with its query. */
  path: string;
}

/** What `prepare` hands to `callUpstream`: the adapter, and the call in its terms. */
interface PreparedCall {
  route: DataPlaneRoute;
  adapter: ProviderAdapter;
  ctx: RequestContext;
  facts: RequestFacts;
  stored: ResolvedProvider | undefined;
}

/** One attempt of a routed request, as the routing engine hands it back. */
const NOTHING_USED = Object.freeze({ tokens: 0, cost: 0 });

/** What a finished request used, for settling; built only when there is something to settle. */
function settledUsage(record: LogRecord): { tokens: number | null; cost: number } {
  return { tokens: record.totalTokens, cost: record.cost ?? 0 };
}

/** What the policies see of a request; `policies: false` checks only the given inline limits. */
function enforcementContext(
  attempt: Attempt,
  facts: RequestFacts,
  inline: readonly InlineLimits[],
  policies: boolean,
): EnforcementContext {
  const { principal, record } = attempt;
  return {
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    apiKeyId: principal.apiKey?.id ?? null,
    userId: principal.user?.id ?? null,
    metadata: (record.metadata as Record<string, string> | null) ?? NO_METADATA,
    inline,
    policies,
    estimate: tokenEstimate(facts),
  };
}

interface ProviderHold {
  call: PreparedCall;
  reservation: Reservation;
  /** Whether the call went out to the provider (then it counts) or stopped before (released). */
  called: boolean;
}

interface RoutedCall {
  call: PreparedCall;
  response: UpstreamResponse;
  /** The answer read whole (JSON answers and errors), so a dropped body can still fall back. */
  buffer: Buffer | null;
}

/** Whether the request says which provider to use (otherwise `GET /models` answers for the workspace). */
function namesProvider(headers: IncomingHttpHeaders): boolean {
  return (
    headers['x-gateway-provider'] !== undefined ||
    headers['x-gateway-virtual-key'] !== undefined ||
    headers['x-gateway-config'] !== undefined
  );
}

/** Whether an object has an own enumerable key, without allocating a key array. */
function hasKeys(value: object): boolean {
  for (const _ in value) return true;
  return false;
}

const NO_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** Tokens a call may use at most, for token limits: only when the request bounds its output. */
function tokenEstimate(facts: RequestFacts): { tokens: number } | undefined {
  const body = facts.body;
  if (!body) return undefined;
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max !== 'number' || !Number.isFinite(max) || max < 0) return undefined;
  // A token is at least a few bytes of prompt: bytes / 4 bounds the prompt well from above.
  const size = facts.rawBody?.length ?? JSON.stringify(body).length;
  return { tokens: Math.ceil(size / 4) + max };
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
 *
 * The steps, each in one place: `resolve` (which provider, with which credentials), `prepare`
 * (admission and the body in the adapter's terms), `callUpstream` (the attempt and the relay of
 * its answer), `fail` (errors to the envelope), `finish` (the log record, queued).
 */
@Injectable()
export class GatewayService implements OnApplicationShutdown {
  private readonly logger = new Logger(GatewayService.name);
  private readonly upstream = new UpstreamClient();

  /** Stored-provider lookups per workspace, made once. */
  private readonly lookups = new Map<string, TargetLookups>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOG_SINK) private readonly logs: LogSink,
    private readonly directory: ProviderDirectory,
    private readonly models: ModelDirectory,
    private readonly configs: ConfigStore,
    private readonly routing: ConfigRuntime,
    private readonly policies: PolicyEnforcer,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.upstream.close();
  }

  async handle(route: DataPlaneRoute, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const attempt = this.startAttempt(route, request);
    const cancel = new UpstreamCancel();
    const onClose = () => {
      if (!reply.raw.writableFinished) cancel.abort();
    };
    reply.raw.once('close', onClose);
    try {
      const trace = readTraceHeaders(request.headers);
      applyTraceHeaders(attempt.record, trace, attempt.principal);
      const strict = trace.strictOpenAiCompliance;
      if ((route === 'models.list' || route === 'models.retrieve') && !namesProvider(request.headers)) {
        return await this.answerModels(route, request, reply, attempt);
      }
      const config = this.configFor(request, attempt.principal);
      const routed = config ? await config : null;
      if (routed) {
        await this.routeWithConfig(routed, route, request, reply, attempt, cancel, strict);
      } else {
        const prepared = this.prepare(route, request, attempt, strict);
        const call = prepared instanceof Promise ? await prepared : prepared;
        const admitted = this.admit(call.facts, attempt, reply, call.stored);
        if (admitted) await admitted;
        await this.callUpstream(call, reply, attempt, cancel);
      }
    } catch (error) {
      this.fail(error, request, reply, attempt, cancel.aborted);
    } finally {
      reply.raw.off('close', onClose);
      this.finish(attempt);
    }
  }

  private startAttempt(route: DataPlaneRoute, request: FastifyRequest): Attempt {
    const principal = request.principal as Principal;
    return {
      started: performance.now(),
      principal,
      firstByteAt: null,
      usage: undefined,
      responseText: '',
      stored: undefined,
      reservation: null,
      providerHolds: null,
      servedHold: null,
      called: false,
      recorder: null,
      upstream: null,
      record: newLogRecord(route, principal, {
        requestId: String(request.id),
        traceId: request.traceId,
        method: request.method,
        path: request.url,
      }),
    };
  }

  /** `@slug` and virtual-key lookups of the principal's workspace, from the directory's memory. */
  private lookupsFor(principal: Principal): TargetLookups {
    const workspaceId = principal.workspaceId;
    if (!workspaceId) return {};
    let lookups = this.lookups.get(workspaceId);
    if (!lookups) {
      lookups = storedProviderLookups(this.directory, workspaceId);
      this.lookups.set(workspaceId, lookups);
    }
    return lookups;
  }

  /**
   * The config that governs the request, when one does: `x-gateway-config`, the key's default or
   * the workspace's default. Null (no promise, no work) for the common request that has none.
   */
  private configFor(request: FastifyRequest, principal: Principal): Promise<RequestConfig | null> | null {
    // Configs belong to a workspace; a principal without one is refused further on (no permission).
    const workspaceId = principal.workspaceId;
    if (!workspaceId) return null;
    const header = request.headers['x-gateway-config'];
    const keyDefault = principal.apiKey?.defaults?.config_id;
    if (!header && !keyDefault && !this.configs.defaultFor(workspaceId)) return null;
    return this.configs.resolveForRequest({
      workspaceId,
      header,
      apiKeyDefaults: principal.apiKey?.defaults ?? null,
    });
  }

  /** The target (from headers and memory), admission, and the body in the adapter's terms. */
  private prepare(
    route: DataPlaneRoute,
    request: FastifyRequest,
    attempt: Attempt,
    strict: boolean,
  ): PreparedCall | Promise<PreparedCall> {
    const target = resolveTarget(request.headers, this.lookupsFor(attempt.principal));
    if (target instanceof Promise)
      return target.then((resolved) => this.prepareFor(route, request, attempt, strict, resolved));
    return this.prepareFor(route, request, attempt, strict, target);
  }

  private prepareFor(
    route: DataPlaneRoute,
    request: FastifyRequest,
    attempt: Attempt,
    strict: boolean,
    target: ResolvedTarget | null,
  ): PreparedCall {
    if (!target) {
      if (route === 'passthrough')
        throw CommonErrors.routeNotFound(request.method, request.url.split('?')[0]);
      throw GatewayErrors.noProvider();
    }
    this.checkPermission(attempt.principal);
    const facts = this.readRequest(route, request, attempt, strict);
    return this.callFor(facts, target, attempt, request, facts.body, null);
  }

  /**
   * `GET /models` and `GET /models/{model}` naming no provider: the models the caller's workspace
   * may use across its providers (allow-lists, custom models, catalog), from memory.
   */
  private async answerModels(
    route: DataPlaneRoute,
    request: FastifyRequest,
    reply: FastifyReply,
    attempt: Attempt,
  ): Promise<void> {
    const { principal, record } = attempt;
    this.checkPermission(principal);
    const workspaceId = principal.workspaceId;
    if (!workspaceId) throw GatewayErrors.noProvider();
    let answer: unknown;
    if (route === 'models.list') {
      answer = this.models.listForWorkspace(workspaceId);
    } else {
      const model = (request.params as { model?: string }).model ?? '';
      record.model = model;
      answer = this.models.findForWorkspace(workspaceId, model);
      if (!answer)
        throw new AppError(
          404,
          'model_not_found',
          `The model '${model}' is not available to this workspace`,
          'model',
        );
    }
    record.status = 200;
    attempt.firstByteAt = performance.now();
    await reply.status(200).type('application/json').send(answer);
  }

  /** The wildcard route declares no permission so that a path without a provider is a plain 404. */
  private checkPermission(principal: Principal): void {
    if (!principal.permissions.has('completions.write'))
      throw AuthErrors.missingPermission('completions.write');
  }

  /** The body validated for its route, the model and stream flag, and the log's copy of the request. */
  private readRequest(
    route: DataPlaneRoute,
    request: FastifyRequest,
    attempt: Attempt,
    strictDefault: boolean,
  ): RequestFacts {
    const { record } = attempt;
    const adapterRoute: GatewayRoute = route === 'passthrough' ? 'openai.proxy' : route;
    const multipart = MULTIPART_GATEWAY_ROUTES.has(adapterRoute);
    let body: Record<string, unknown> | undefined;
    let rawBody = request.rawBody;
    let strict = strictDefault;
    if (
      !multipart &&
      route !== 'passthrough' &&
      request.body &&
      typeof request.body === 'object' &&
      !Buffer.isBuffer(request.body)
    ) {
      body = request.body as Record<string, unknown>;
      validateRequestBody(adapterRoute, body);
      if ('strict_openai_compliance' in body) {
        strict = body.strict_openai_compliance !== false;
        delete body.strict_openai_compliance;
        // The original bytes are forwarded only while they still say what the body says.
        rawBody = undefined;
      }
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
    return { route, adapterRoute, body, rawBody, multipart, stream, strict, path };
  }

  /** One provider's call: route support, the stored provider's model rules, and the adapter's context. */
  private callFor(
    facts: RequestFacts,
    target: ResolvedTarget,
    attempt: Attempt,
    request: FastifyRequest,
    body: Record<string, unknown> | undefined,
    strictOverride: boolean | null,
  ): PreparedCall {
    const { record } = attempt;
    const { adapter, stored } = target;
    record.provider = adapter.id;
    record.providerSlug = target.providerSlug;
    if (!adapter.routes.has(facts.adapterRoute)) {
      throw GatewayErrors.routeNotSupported(
        adapter.id,
        facts.route === 'passthrough' ? `${request.method} ${request.url.split('?')[0]}` : facts.route,
      );
    }
    let rawBody = body === facts.body ? facts.rawBody : undefined;
    if (target.overrideParams && body) {
      body = { ...body, ...target.overrideParams };
      rawBody = undefined;
    }
    let credentials = target.credentials;
    if (stored) {
      const model = record.model;
      if (model) {
        const refusal = checkModel(stored, model);
        if (refusal) throw refusalError(refusal, 'model');
        // An Azure provider serves each model from its deployment; config credentials stay on top.
        const picked = credentialsForModel(stored, model);
        if (picked !== stored.credentials)
          credentials = {
            ...credentials,
            azureDeploymentId: picked.azureDeploymentId,
            azureApiVersion: picked.azureApiVersion,
          };
      }
    }
    const ctx: RequestContext = {
      route: facts.adapterRoute,
      body,
      rawBody: facts.multipart || facts.route === 'passthrough' || (rawBody && body) ? rawBody : undefined,
      rawContentType: request.headers['content-type'],
      method: request.method as RequestContext['method'],
      path: facts.path,
      credentials,
      stream: facts.stream,
      includeUsage: (body?.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
      strictOpenAiCompliance: strictOverride ?? facts.strict,
    };
    return { route: facts.route, adapter, ctx, facts, stored };
  }

  /**
   * The policies: rate limits and budgets reserve before the call (429 or 412 when over). No
   * promise when none can apply, the common case, so the request goes on in the same tick.
   */
  private admit(
    facts: RequestFacts,
    attempt: Attempt,
    reply: FastifyReply,
    stored: ResolvedProvider | undefined,
  ): Promise<void> | undefined {
    const { principal } = attempt;
    const inline = inlineLimitsFor(principal, stored);
    if (!this.policies.mayApply(principal.organisationId, principal.workspaceId, inline)) return undefined;
    return this.policies.check(enforcementContext(attempt, facts, inline, true)).then((reservation) => {
      attempt.reservation = reservation;
      if (hasKeys(reservation.headers)) reply.headers(reservation.headers);
    });
  }

  /**
   * A request under a config: the response cache, then the routing engine (strategies, retries,
   * timeouts, circuit breakers) calling providers through `routedAttempt`, then the relay.
   */
  private async routeWithConfig(
    config: RequestConfig,
    route: DataPlaneRoute,
    request: FastifyRequest,
    reply: FastifyReply,
    attempt: Attempt,
    cancel: UpstreamCancel,
    strict: boolean,
  ): Promise<void> {
    const { record, principal } = attempt;
    this.checkPermission(principal);
    const facts = this.readRequest(route, request, attempt, strict);
    record.configId = config.id;

    const namespace = request.headers['x-gateway-cache-namespace'];
    const cache = this.routing.openCache(config, {
      workspaceId: principal.workspaceId ?? principal.organisationId,
      route: facts.adapterRoute,
      body: facts.body ?? facts.rawBody ?? null,
      namespace: (Array.isArray(namespace) ? namespace[0] : namespace) ?? null,
      metadata: record.metadata,
      headers: cacheKeyHeaders(request.headers),
      forceRefresh: isForceRefresh(request.headers['x-gateway-cache-force-refresh']),
    });
    // Before the cache: a cached answer is still a request, and rate limits count requests.
    await this.admit(facts, attempt, reply, undefined);
    if (cache.enabled) {
      const hit = await cache.lookup();
      record.cacheStatus = cache.status === 'HIT' ? 'hit' : cache.status === 'REFRESH' ? 'refresh' : 'miss';
      if (hit) {
        reply.headers(routingHeaders(cache.status));
        return this.replayCached(hit, reply, attempt);
      }
    }

    const clientGone = new AbortController();
    if (cancel.aborted) clientGone.abort();
    else cancel.once('abort', () => clientGone.abort());
    const result: RoutingResult<RoutedCall> = await this.routing.run(
      config,
      {
        route: facts.adapterRoute,
        path: facts.path,
        body: facts.body,
        metadata: record.metadata,
        headers: request.headers,
        signal: clientGone.signal,
        isCommitted: () => reply.raw.headersSent,
      },
      (target, context) => this.routedAttempt(target, context, facts, request, attempt),
    );
    record.retryCount = result.retryCount;
    this.closeProviderHolds(attempt, result.outcome.result?.call);
    this.logOtherAttempts(result, attempt);
    if (result.aborted || cancel.aborted) throw new Error('client closed the connection');

    const served = result.outcome.result;
    if (served) {
      record.provider = served.call.adapter.id;
      record.providerSlug = served.call.stored?.slug ?? record.providerSlug;
      attempt.stored = served.call.stored;
    }
    reply.headers(routingHeaders(cache.status, result));
    if (!result.ok || !served) {
      if (served?.buffer) {
        record.status = served.response.statusCode;
        return this.relayError(served.call.adapter, served.response, reply, attempt, served.buffer);
      }
      throw (
        result.outcome.error ?? GatewayErrors.upstreamUnreachable(record.provider ?? 'the provider', 'error')
      );
    }

    const { call, response, buffer } = served;
    attempt.upstream = response;
    record.status = response.statusCode;
    if (call.route === 'passthrough') return this.relayExactly(response, reply, attempt);
    if (call.ctx.stream) {
      if (cache.enabled) attempt.recorder = cache.recordStream(response.statusCode, {});
      return this.relayStream(call.adapter, call.ctx, response, reply, attempt);
    }
    // Stored before the answer is sent, so the client's next identical request finds it.
    const store = cache.enabled
      ? (payload: Buffer | string, contentType: string) =>
          cache.storeJson(response.statusCode, { 'content-type': contentType }, payload)
      : undefined;
    await this.relayJson(call.adapter, call.ctx, response, reply, attempt, buffer ?? undefined, store);
  }

  /**
   * One provider call for the routing engine. Errors and JSON answers are read whole here, so a
   * failure (even a dropped body) leaves the engine free to retry or fall back; a stream is
   * handed back at its headers and relayed afterwards.
   */
  private async routedAttempt(
    target: LeafTarget,
    context: AttemptContext,
    facts: RequestFacts,
    request: FastifyRequest,
    attempt: Attempt,
  ): Promise<AttemptOutcome<RoutedCall>> {
    const resolved = await this.resolveLeaf(target, request, attempt.principal);
    const call = this.callFor(
      facts,
      resolved,
      attempt,
      request,
      context.body,
      target.strictOpenAiCompliance ?? null,
    );
    const hold = call.stored ? await this.admitProvider(call, facts, attempt) : null;
    const upstreamRequest = await call.adapter.buildRequest(call.ctx);
    if (hasKeys(context.forwardHeaders)) Object.assign(upstreamRequest.headers, context.forwardHeaders);
    if (call.stored?.customHeaders) Object.assign(upstreamRequest.headers, call.stored.customHeaders);
    attempt.called = true;
    if (hold) hold.called = true;
    const response = await this.upstream.call(upstreamRequest, context.signal);
    const status = response.statusCode;
    if (status >= 400) {
      const buffer = await response.body.read();
      return { status, retryAfterMs: retryAfterMs(response.headers), result: { call, response, buffer } };
    }
    if (!facts.stream && facts.route !== 'passthrough') {
      return { status, result: { call, response, buffer: await response.body.read() } };
    }
    return { status, result: { call, response, buffer: null } };
  }

  /**
   * The limits of a stored provider the routing engine picked: the request's own policies and
   * limits were checked once before routing, this checks only the provider's (and its grant's).
   * A refusal (429, 412) fails this target, so a fallback can still serve the request.
   */
  private async admitProvider(
    call: PreparedCall,
    facts: RequestFacts,
    attempt: Attempt,
  ): Promise<ProviderHold | null> {
    const limits = providerLimits(call.stored!);
    if (limits.length === 0) return null;
    const reservation = await this.policies.check(enforcementContext(attempt, facts, limits, false));
    const hold: ProviderHold = { call, reservation, called: false };
    (attempt.providerHolds ??= []).push(hold);
    return hold;
  }

  /**
   * When routing ends: the hold of the provider whose answer is relayed waits for the usage;
   * the other targets tried count as requests that used nothing, or are released if never called.
   */
  private closeProviderHolds(attempt: Attempt, served: PreparedCall | undefined): void {
    const holds = attempt.providerHolds;
    if (!holds) return;
    attempt.providerHolds = null;
    for (const hold of holds) {
      if (served && hold.call === served && hold.called) attempt.servedHold = hold;
      else if (hold.called) void this.policies.settle(hold.reservation, NOTHING_USED);
      else void this.policies.release(hold.reservation);
    }
  }

  /** A config target as a provider with credentials: by name, `@slug`, virtual key, or the request's own. */
  private async resolveLeaf(
    target: LeafTarget,
    request: FastifyRequest,
    principal: Principal,
  ): Promise<ResolvedTarget> {
    let resolved: ResolvedTarget | null;
    if (target.virtualKey) {
      resolved = await resolveTarget(
        { 'x-gateway-virtual-key': target.virtualKey },
        this.lookupsFor(principal),
      );
    } else if (target.provider?.startsWith('@')) {
      resolved = await resolveTarget({ 'x-gateway-provider': target.provider }, this.lookupsFor(principal));
    } else if (target.provider) {
      const adapter = getProviderAdapter(target.provider);
      if (!adapter) throw GatewayErrors.unknownProvider(target.provider);
      const credentials = { ...target.credentials };
      if (!credentials.apiKey) {
        const apiKey = bearer(request.headers);
        if (apiKey) credentials.apiKey = apiKey;
      }
      return { adapter, credentials, providerSlug: null, overrideParams: null };
    } else {
      const headers: IncomingHttpHeaders = { ...request.headers, 'x-gateway-config': undefined };
      resolved = await resolveTarget(headers, this.lookupsFor(principal));
    }
    if (!resolved) throw GatewayErrors.noProvider();
    // Config credentials (azure_entra_scope, anthropic_beta, ...) reach the call over stored ones.
    return hasKeys(target.credentials)
      ? { ...resolved, credentials: { ...resolved.credentials, ...target.credentials } }
      : resolved;
  }

  /** A routed request logs every target it tried, each as its own record under the trace id. */
  private logOtherAttempts(result: RoutingResult<RoutedCall>, attempt: Attempt): void {
    const servedPath = result.target?.path ?? null;
    const byPath = new Map<
      string,
      { status: number | null; provider: string | null; ms: number; retries: number; error?: string }
    >();
    for (const tried of result.attempts) {
      if (tried.skipped || tried.path === servedPath) continue;
      const seen = byPath.get(tried.path);
      byPath.set(tried.path, {
        status: tried.status,
        provider: tried.provider,
        ms: (seen?.ms ?? 0) + tried.durationMs,
        retries: seen ? seen.retries + 1 : 0,
        error: tried.error,
      });
    }
    for (const tried of byPath.values()) {
      const status = tried.status ?? 502;
      this.logs.enqueue({
        ...attempt.record,
        id: timeOrderedId(),
        provider: tried.provider?.startsWith('@')
          ? attempt.record.provider
          : (tried.provider ?? attempt.record.provider),
        status,
        latencyMs: Math.round(tried.ms * 1000) / 1000,
        ttfbMs: null,
        retryCount: tried.retries,
        errorCode: `upstream_${status}`,
        errorMessage: tried.error ?? `The provider answered ${status}`,
        responseBody: null,
        createdAt: new Date(),
      });
    }
  }

  /** A cached answer, replayed as it was sent: JSON whole, a stream chunk by chunk. */
  private async replayCached(hit: CachedResponse, reply: FastifyReply, attempt: Attempt): Promise<void> {
    attempt.record.status = hit.status;
    if (hit.kind === 'json') {
      attempt.firstByteAt = performance.now();
      const body = hit.body ?? Buffer.alloc(0);
      await reply.status(hit.status).headers(hit.headers).send(body);
      const cap = this.config.logBodyMaxBytes;
      if (cap > 0) attempt.responseText = body.toString('utf8', 0, Math.min(body.length, cap));
      return;
    }
    const raw = takeOver(reply, hit.status, { ...SSE_HEADERS, ...hit.headers });
    for (const chunk of hit.chunks ?? []) await this.writeChunk(raw, attempt, chunk);
    raw.end();
  }

  /** The upstream attempt, and the relay of its answer to the client. */
  private async callUpstream(
    call: PreparedCall,
    reply: FastifyReply,
    attempt: Attempt,
    cancel: UpstreamCancel,
  ): Promise<void> {
    const { route, adapter, ctx } = call;
    const upstreamRequest = await adapter.buildRequest(ctx);
    if (call.stored?.customHeaders) Object.assign(upstreamRequest.headers, call.stored.customHeaders);
    attempt.called = true;
    attempt.stored = call.stored;
    const response = await this.upstream.call(upstreamRequest, cancel);
    attempt.upstream = response;
    attempt.record.status = response.statusCode;

    if (route === 'passthrough') return this.relayExactly(response, reply, attempt);
    if (response.statusCode >= 400) return this.relayError(adapter, response, reply, attempt);
    if (ctx.stream) return this.relayStream(adapter, ctx, response, reply, attempt);
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
    const raw = takeOver(reply, response.statusCode, headers);
    await response.body.relay(raw, (chunk) => this.sendChunk(raw, attempt, chunk));
    raw.end();
  }

  private async relayError(
    adapter: ProviderAdapter,
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
    read?: Buffer,
  ): Promise<void> {
    const buffer = read ?? (await response.body.read());
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

  /** A JSON answer, translated when the provider is not OpenAI-shaped; returns what was sent. */
  private async relayJson(
    adapter: ProviderAdapter,
    ctx: RequestContext,
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
    read?: Buffer,
    beforeSend?: (payload: Buffer | string, contentType: string) => Promise<void>,
  ): Promise<void> {
    const buffer = read ?? (await response.body.read());
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
    const sentType = native ? contentType : 'application/json';
    if (beforeSend) await beforeSend(payload, sentType);
    await reply.status(response.statusCode).type(sentType).send(payload);
    // Usage is read after the answer is on its way.
    if (isJson) attempt.usage = this.usageOf(adapter, ctx, buffer, answer);
    const cap = this.config.logBodyMaxBytes;
    if (cap > 0 && isJson)
      attempt.responseText =
        typeof payload === 'string'
          ? payload.slice(0, cap)
          : payload.toString('utf8', 0, Math.min(payload.length, cap));
  }

  /** Usage of a JSON answer; never throws (an unreadable answer has no usage). */
  private usageOf(
    adapter: ProviderAdapter,
    ctx: RequestContext,
    buffer: Buffer,
    answer: unknown,
  ): Usage | undefined {
    const read = (body: unknown) => adapter.extractUsage?.(ctx.route, body) ?? extractOpenAiUsage(body);
    try {
      if (answer === undefined && adapter.isOpenAiNative(ctx.route)) {
        // An OpenAI-shaped answer keeps usage in a top-level member: parse that, not the whole answer.
        const usage = topLevelJsonValue(buffer, 'usage');
        if (usage !== undefined) return read({ usage: JSON.parse(usage) });
      }
      return read(answer ?? JSON.parse(buffer.toString('utf8')));
    } catch {
      return undefined;
    }
  }

  private async relayStream(
    adapter: ProviderAdapter,
    ctx: RequestContext,
    response: UpstreamResponse,
    reply: FastifyReply,
    attempt: Attempt,
  ): Promise<void> {
    const nativeRoute = adapter.isOpenAiNative(ctx.route);
    const passthroughRoute = adapter.isNativePassthrough?.(ctx.route) === true;
    const upstreamType = String(response.headers['content-type'] ?? '');
    const raw = takeOver(reply, 200, {
      ...SSE_HEADERS,
      ...(passthroughRoute && upstreamType ? { 'content-type': upstreamType } : {}),
    });
    if (nativeRoute || passthroughRoute) {
      const scanner = nativeRoute ? createOpenAiSseUsageScanner() : adapter.createStreamTranslator(ctx);
      await response.body.relay(raw, (chunk) => {
        const flowing = this.sendChunk(raw, attempt, chunk);
        scanner.write(chunk);
        return flowing;
      });
      scanner.end();
      attempt.usage = scanner.usage();
      // Stored before the end reaches the client, so its next identical request finds it.
      if (attempt.recorder) await attempt.recorder.finish();
      raw.end();
      return;
    }

    const translator = adapter.createStreamTranslator(ctx);
    await response.body.relay(raw, (chunk) => {
      const objects = translator.write(chunk);
      return objects.length === 0 || this.sendChunk(raw, attempt, sseEvents(objects));
    });
    const tail = translator.end();
    if (tail.length > 0) await this.writeChunk(raw, attempt, sseEvents(tail));
    await this.writeChunk(raw, attempt, DONE);
    attempt.usage = translator.usage();
    if (attempt.recorder) await attempt.recorder.finish();
    raw.end();
  }

  /**
   * One chunk to the client: first-byte time, the cache's and the log's (capped) copies. Answers
   * whether the client took it without buffering (false: wait for `drain` before the next).
   */
  private sendChunk(raw: ServerResponse, attempt: Attempt, data: Buffer | string): boolean {
    if (attempt.firstByteAt === null) attempt.firstByteAt = performance.now();
    // The client first; the copies (decoding the bytes for the log) after.
    const flowing = raw.write(data);
    attempt.recorder?.push(data);
    const room = this.config.logBodyMaxBytes - attempt.responseText.length;
    if (room > 0)
      attempt.responseText += typeof data === 'string' ? data.slice(0, room) : data.toString('utf8', 0, room);
    return flowing;
  }

  /** sendChunk, then waits while the client is behind (or until it has gone). */
  private async writeChunk(raw: ServerResponse, attempt: Attempt, data: Buffer | string): Promise<void> {
    if (!this.sendChunk(raw, attempt, data)) await drained(raw);
  }

  private fail(
    error: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
    attempt: Attempt,
    aborted: boolean,
  ): void {
    const { record } = attempt;
    attempt.recorder?.abandon();
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

  /** The one place a record is completed and queued; runs for every request, whatever happened. */
  private finish(attempt: Attempt): void {
    const { record, stored, upstream } = attempt;
    // Failed between the answer's headers and its relay: the unread body must not hold its connection.
    if (upstream && !upstream.body.finished) upstream.body.destroy(new undiciErrors.RequestAbortedError());
    completeLogRecord(
      record,
      { startedAt: attempt.started, firstByteAt: attempt.firstByteAt, endedAt: performance.now() },
      attempt.usage,
      attempt.responseText,
      stored ? (model) => pricingFor(stored, model) : undefined,
    );
    this.logs.enqueue(record);
    const reservation = attempt.reservation;
    if (reservation) {
      if (attempt.called) void this.policies.settle(reservation, settledUsage(record));
      // A cache hit counts as a request that used no tokens and cost nothing.
      else if (record.cacheStatus === 'hit') void this.policies.settle(reservation, NOTHING_USED);
      else void this.policies.release(reservation);
    }
    if (attempt.servedHold) void this.policies.settle(attempt.servedHold.reservation, settledUsage(record));
    // Holds still open here belong to routing that threw before it ended.
    this.closeProviderHolds(attempt, undefined);
  }
}
