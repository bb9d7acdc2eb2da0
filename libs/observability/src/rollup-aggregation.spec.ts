import type { LogRecord } from './log-record';
import { latencyBucketIndex } from './latency-histogram';
import { aggregateRollups, bucketStart } from './rollup-aggregation';

export function record(overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    requestId: 'req',
    traceId: 'trace',
    spanId: null,
    parentSpanId: null,
    spanName: null,
    organisationId: 'org',
    workspaceId: 'ws',
    apiKeyId: 'key',
    userId: null,
    provider: 'openai',
    providerSlug: null,
    model: 'gpt-4o',
    configId: null,
    promptId: null,
    route: 'chat.completions',
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    isStream: false,
    latencyMs: 120,
    ttfbMs: 80,
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    cachedTokens: 0,
    reasoningTokens: 0,
    cost: 0.001,
    cacheStatus: 'miss',
    retryCount: 0,
    metadata: null,
    requestBody: null,
    responseBody: null,
    errorCode: null,
    errorMessage: null,
    createdAt: new Date('2030-01-02T03:04:05.678Z'),
    ...overrides,
  };
}

describe('rollup aggregation', () => {
  it('truncates to the UTC minute and hour', () => {
    const time = new Date('2030-01-02T03:04:05.678Z');
    expect(bucketStart(time, 'minute').toISOString()).toBe('2030-01-02T03:04:00.000Z');
    expect(bucketStart(time, 'hour').toISOString()).toBe('2030-01-02T03:00:00.000Z');
  });

  it('sums records with the same dimensions into one minute row and one hour row', () => {
    const deltas = aggregateRollups([
      record({ latencyMs: 40, cost: 0.25 }),
      record({ latencyMs: 300, cost: null, ttfbMs: null, cacheStatus: 'miss' }),
    ]);
    expect(deltas).toHaveLength(2);
    const minute = deltas.find((delta) => delta.granularity === 'minute')!;
    expect(minute).toMatchObject({
      requestCount: 2,
      errorCount: 0,
      promptTokens: 20,
      totalTokens: 30,
      cost: 0.25,
      latencySumMs: 340,
      ttfbCount: 1,
      ttfbSumMs: 80,
    });
    expect(minute.latencyBuckets[latencyBucketIndex(40)]).toBe(1);
    expect(minute.latencyBuckets[latencyBucketIndex(300)]).toBe(1);
    expect(minute.latencyBuckets.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('keeps every dimension apart: status, cache status, key, model, minute', () => {
    const deltas = aggregateRollups([
      record(),
      record({ status: 500 }),
      record({ cacheStatus: 'hit' }),
      record({ apiKeyId: 'other' }),
      record({ model: 'gpt-4o-mini' }),
      record({ createdAt: new Date('2030-01-02T03:05:00.000Z') }),
    ]);
    const minutes = deltas.filter((delta) => delta.granularity === 'minute');
    const hours = deltas.filter((delta) => delta.granularity === 'hour');
    expect(minutes).toHaveLength(6);
    // The two minutes share an hour when the other dimensions agree.
    expect(hours).toHaveLength(5);
    expect(minutes.find((delta) => delta.statusCode === 500)!.errorCount).toBe(1);
    expect(minutes.find((delta) => delta.cacheStatus === 'hit')!.cacheHitCount).toBe(1);
  });

  it('gives a null dimension and a present one different ids, and the same tuple the same id', () => {
    const [a] = aggregateRollups([record({ workspaceId: null })]);
    const [b] = aggregateRollups([record({ workspaceId: 'ws' })]);
    const [c] = aggregateRollups([record({ workspaceId: null, id: 'another' })]);
    expect(a.id).not.toBe(b.id);
    expect(a.id).toBe(c.id);
    expect(a.id.length).toBeLessThanOrEqual(64);
  });

  it('rounds fractional latencies into whole milliseconds', () => {
    const [minute] = aggregateRollups([record({ latencyMs: 10.4 }), record({ latencyMs: 10.6 })]);
    expect(minute.latencySumMs).toBe(21);
    expect(minute.latencyBuckets[0]).toBe(1);
    expect(minute.latencyBuckets[1]).toBe(1);
  });
});
