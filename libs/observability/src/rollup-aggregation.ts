import { createHash } from 'node:crypto';
import type { LogRecord } from './log-record';
import { LATENCY_BUCKET_COUNT, latencyBucketIndex } from './latency-histogram';
import type { RollupGranularity } from './entities/request-log-rollup.entity';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The dimensions and counters of one rollup row, summed in memory before one upsert per batch. */
export interface RollupDelta {
  id: string;
  bucketStart: Date;
  granularity: RollupGranularity;
  organisationId: string;
  workspaceId: string | null;
  apiKeyId: string | null;
  provider: string | null;
  model: string | null;
  configId: string | null;
  promptId: string | null;
  statusCode: number;
  cacheStatus: string;
  requestCount: number;
  errorCount: number;
  cacheHitCount: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  cost: number;
  latencySumMs: number;
  ttfbCount: number;
  ttfbSumMs: number;
  latencyBuckets: number[];
}

/** Start of the UTC minute or hour holding `time`. */
export function bucketStart(time: Date, granularity: RollupGranularity): Date {
  const size = granularity === 'minute' ? MINUTE_MS : HOUR_MS;
  const ms = time.getTime();
  return new Date(ms - (((ms % size) + size) % size));
}

/** The (granularity, bucket, dimensions) tuple a record adds to, as text. */
function rollupKey(granularity: RollupGranularity, start: Date, record: LogRecord): string {
  return JSON.stringify([
    granularity,
    start.getTime(),
    record.organisationId,
    record.workspaceId,
    record.apiKeyId,
    record.provider,
    record.model,
    record.configId,
    record.promptId,
    record.status,
    record.cacheStatus,
  ]);
}

function digest(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/** A stable id for (granularity, bucket, dimensions): the upsert's conflict target. */
export function rollupId(granularity: RollupGranularity, start: Date, record: LogRecord): string {
  return digest(rollupKey(granularity, start, record));
}

/** A failed request is any answer with an error status, whatever the upstream said. */
export function isError(record: LogRecord): boolean {
  return record.status >= 400;
}

const GRANULARITIES: readonly RollupGranularity[] = ['minute', 'hour'];

/**
 * Sums a batch into one delta per (granularity, bucket, dimensions). The writer upserts the
 * result with additions, so rows from many batches and replicas add up.
 */
export function aggregateRollups(records: readonly LogRecord[]): RollupDelta[] {
  // Keyed by the tuple's text; its digest (the row id) is taken once per row, not once per record.
  const byKey = new Map<string, RollupDelta>();
  for (const record of records) {
    const latency = Math.max(0, Math.round(record.latencyMs));
    const bucket = latencyBucketIndex(latency);
    for (const granularity of GRANULARITIES) {
      const start = bucketStart(record.createdAt, granularity);
      const key = rollupKey(granularity, start, record);
      let delta = byKey.get(key);
      if (!delta) {
        delta = {
          id: digest(key),
          bucketStart: start,
          granularity,
          organisationId: record.organisationId,
          workspaceId: record.workspaceId,
          apiKeyId: record.apiKeyId,
          provider: record.provider,
          model: record.model,
          configId: record.configId,
          promptId: record.promptId,
          statusCode: record.status,
          cacheStatus: record.cacheStatus,
          requestCount: 0,
          errorCount: 0,
          cacheHitCount: 0,
          promptTokens: 0,
          completionTokens: 0,
          totalTokens: 0,
          cachedTokens: 0,
          reasoningTokens: 0,
          cost: 0,
          latencySumMs: 0,
          ttfbCount: 0,
          ttfbSumMs: 0,
          latencyBuckets: new Array<number>(LATENCY_BUCKET_COUNT).fill(0),
        };
        byKey.set(key, delta);
      }
      delta.requestCount += 1;
      if (isError(record)) delta.errorCount += 1;
      if (record.cacheStatus === 'hit') delta.cacheHitCount += 1;
      delta.promptTokens += record.promptTokens;
      delta.completionTokens += record.completionTokens;
      delta.totalTokens += record.totalTokens;
      delta.cachedTokens += record.cachedTokens;
      delta.reasoningTokens += record.reasoningTokens;
      delta.cost += record.cost ?? 0;
      delta.latencySumMs += latency;
      if (record.ttfbMs !== null) {
        delta.ttfbCount += 1;
        delta.ttfbSumMs += Math.max(0, Math.round(record.ttfbMs));
      }
      delta.latencyBuckets[bucket] += 1;
    }
  }
  return [...byKey.values()];
}
