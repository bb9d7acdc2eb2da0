import { Logger } from '@nestjs/common';
import { timeOrderedId, type Principal } from '@switchboard/common';
import {
  ModelPricing,
  computeCostAmount,
  getModelPricing,
  tokenUsageFromOpenAI,
} from '@switchboard/integrations';
import type { LogRecord } from '@switchboard/observability';
import type { Usage } from '@switchboard/providers';
import type { TraceHeaders } from './request-headers';

const logger = new Logger('GatewayLogs');

/** Where a data-plane request came from, for its log record. */
export interface RequestOrigin {
  requestId: string;
  traceId: string;
  method: string;
  path: string;
}

/** Timings of one request on the `performance.now()` clock. */
export interface RequestTimings {
  startedAt: number;
  /** First byte of the answer body to the client (or first upstream message of a realtime session). */
  firstByteAt: number | null;
  endedAt: number;
}

/** The log record of one data-plane request, filled in as the request goes. */
export function newLogRecord(route: string, principal: Principal, origin: RequestOrigin): LogRecord {
  return {
    id: timeOrderedId(),
    requestId: origin.requestId,
    traceId: origin.traceId,
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
    method: origin.method,
    path: origin.path,
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
  };
}

/** Span ids and metadata from the request headers, merged over the API key's default metadata. */
export function applyTraceHeaders(record: LogRecord, trace: TraceHeaders, principal: Principal): void {
  record.spanId = trace.spanId;
  record.parentSpanId = trace.parentSpanId;
  record.spanName = trace.spanName;
  const defaults = principal.apiKey?.defaults?.metadata as Record<string, string> | undefined;
  record.metadata = defaults || trace.metadata ? { ...defaults, ...trace.metadata } : null;
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/** The last step of every record: timings, tokens and cost. After it the record is queued as is. */
export function completeLogRecord(
  record: LogRecord,
  timings: RequestTimings,
  usage: Usage | undefined,
  responseText: string,
  /** A stored provider's pricing (custom models, adjustments); else the catalog's. */
  pricingOf?: (model: string) => ModelPricing | null,
): void {
  record.latencyMs = round3(timings.endedAt - timings.startedAt);
  record.ttfbMs = timings.firstByteAt === null ? null : round3(timings.firstByteAt - timings.startedAt);
  if (responseText) record.responseBody = responseText;
  if (!usage) return;
  record.promptTokens = usage.prompt_tokens ?? 0;
  record.completionTokens = usage.completion_tokens ?? 0;
  record.totalTokens = usage.total_tokens ?? record.promptTokens + record.completionTokens;
  record.cachedTokens = usage.prompt_tokens_details?.cached_tokens ?? 0;
  record.reasoningTokens = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  if (!record.model) return;
  if (pricingOf) record.cost = priced(pricingOf, record.model, usage);
  else if (record.provider) record.cost = costOf(record.provider, record.model, usage);
}

function priced(
  pricingOf: (model: string) => ModelPricing | null,
  model: string,
  usage: Usage,
): number | null {
  try {
    const tokens = tokenUsageFromOpenAI(usage);
    return tokens ? computeCostAmount(pricingOf(model), tokens) : null;
  } catch (error) {
    logger.warn(`No cost for ${model}: ${(error as Error).message}`);
    return null;
  }
}

/** The catalog's price of a call. Never throws: a pricing problem must not cost the request its log record. */
export function costOf(provider: string, model: string, usage: Usage): number | null {
  try {
    const tokens = tokenUsageFromOpenAI(usage);
    return tokens ? computeCostAmount(getModelPricing(provider, model), tokens) : null;
  } catch (error) {
    logger.warn(`No cost for ${provider}/${model}: ${(error as Error).message}`);
    return null;
  }
}
