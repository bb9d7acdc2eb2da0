import type { LogRecord } from './log-record';
import { LATENCY_BUCKET_COLUMNS } from './latency-histogram';
import type { RollupDelta } from './rollup-aggregation';

/**
 * Records and rollup deltas as the rows they become, keyed by column name. Pure (no TypeORM, no
 * Nest): the SQLite log worker thread uses these too.
 */

/** Strings longer than their column would fail the whole batch on PostgreSQL; cut them instead. */
function cut(value: string | null, length: number): string | null {
  return value !== null && value.length > length ? value.slice(0, length) : value;
}

/**
 * PostgreSQL text and jsonb refuse U+0000, which a body holding binary (a multipart upload) does
 * carry: one such row would have the whole batch refused. It becomes U+FFFD, on both dialects.
 */
function textSafe(value: string | null): string | null {
  return value !== null && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

function metadataSafe(metadata: Record<string, string> | null): Record<string, string> | null {
  if (metadata === null) return null;
  const entries = Object.entries(metadata);
  if (!entries.some(([key, value]) => key.includes('\u0000') || String(value).includes('\u0000')))
    return metadata;
  return Object.fromEntries(entries.map(([key, value]) => [textSafe(key), textSafe(String(value))]));
}

function integer(value: number): number {
  return Number.isFinite(value) ? Math.max(0, Math.round(value)) : 0;
}

/** A LogRecord as the `request_logs` row it becomes. Integers are rounded: PostgreSQL refuses `12.5` for an integer. */
export function toRow(record: LogRecord): Record<string, unknown> {
  return {
    id: record.id,
    request_id: cut(record.requestId, 128) ?? '',
    trace_id: cut(record.traceId, 128) ?? '',
    span_id: cut(record.spanId, 128),
    parent_span_id: cut(record.parentSpanId, 128),
    span_name: cut(record.spanName, 255),
    organisation_id: record.organisationId,
    workspace_id: record.workspaceId,
    api_key_id: record.apiKeyId,
    user_id: record.userId,
    provider: cut(record.provider, 64),
    provider_slug: cut(record.providerSlug, 255),
    model: cut(record.model, 255),
    config_id: cut(record.configId, 255),
    prompt_id: cut(record.promptId, 255),
    route: cut(record.route, 64) ?? '',
    method: cut(record.method, 16) ?? '',
    path: cut(record.path, 2048) ?? '',
    status: integer(record.status),
    is_stream: record.isStream,
    latency_ms: integer(record.latencyMs),
    ttfb_ms: record.ttfbMs === null ? null : integer(record.ttfbMs),
    prompt_tokens: integer(record.promptTokens),
    completion_tokens: integer(record.completionTokens),
    total_tokens: integer(record.totalTokens),
    cached_tokens: integer(record.cachedTokens),
    reasoning_tokens: integer(record.reasoningTokens),
    cost: record.cost !== null && Number.isFinite(record.cost) ? record.cost : null,
    cache_status: cut(record.cacheStatus, 16) ?? 'disabled',
    retry_count: integer(record.retryCount),
    metadata: metadataSafe(record.metadata),
    request_body: textSafe(record.requestBody),
    response_body: textSafe(record.responseBody),
    error_code: cut(record.errorCode, 64),
    error_message: textSafe(record.errorMessage),
    created_at: record.createdAt,
  };
}

/** A rollup delta as the `request_log_rollups` row it adds to. */
export function rollupRow(delta: RollupDelta): Record<string, unknown> {
  const row: Record<string, unknown> = {
    id: delta.id,
    bucket_start: delta.bucketStart,
    granularity: delta.granularity,
    organisation_id: delta.organisationId,
    workspace_id: delta.workspaceId,
    api_key_id: delta.apiKeyId,
    provider: cut(delta.provider, 64),
    model: cut(delta.model, 255),
    config_id: cut(delta.configId, 255),
    prompt_id: cut(delta.promptId, 255),
    status_code: delta.statusCode,
    cache_status: cut(delta.cacheStatus, 16),
    request_count: delta.requestCount,
    error_count: delta.errorCount,
    cache_hit_count: delta.cacheHitCount,
    prompt_tokens: delta.promptTokens,
    completion_tokens: delta.completionTokens,
    total_tokens: delta.totalTokens,
    cached_tokens: delta.cachedTokens,
    reasoning_tokens: delta.reasoningTokens,
    // Float sums of many small prices carry noise below the column's scale.
    cost: Number(delta.cost.toFixed(10)),
    latency_sum_ms: delta.latencySumMs,
    ttfb_count: delta.ttfbCount,
    ttfb_sum_ms: delta.ttfbSumMs,
  };
  LATENCY_BUCKET_COLUMNS.forEach((column, index) => {
    row[column] = delta.latencyBuckets[index];
  });
  return row;
}

/** Rollup columns that identify a row; every other column is a counter added on conflict. */
export const ROLLUP_KEY_COLUMNS: ReadonlySet<string> = new Set([
  'id',
  'bucket_start',
  'granularity',
  'organisation_id',
  'workspace_id',
  'api_key_id',
  'provider',
  'model',
  'config_id',
  'prompt_id',
  'status_code',
  'cache_status',
]);

/**
 * SQLite binds at most 32,766 parameters per statement (PostgreSQL 65,535): a batch wider than
 * that is split, still inside the one transaction.
 */
export const MAX_PARAMETERS = 30_000;
