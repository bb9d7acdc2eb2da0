import {
  LATENCY_BUCKET_BOUNDS_MS,
  LATENCY_BUCKET_COLUMNS,
  latencyBucketIndex,
  percentileFromHistogram,
} from './latency-histogram';

function histogram(latencies: number[]): number[] {
  const counts = new Array<number>(LATENCY_BUCKET_COLUMNS.length).fill(0);
  for (const latency of latencies) counts[latencyBucketIndex(latency)] += 1;
  return counts;
}

describe('latency histogram', () => {
  it('puts a latency in the first bucket whose bound it does not exceed', () => {
    expect(latencyBucketIndex(0)).toBe(0);
    expect(latencyBucketIndex(10)).toBe(0);
    expect(latencyBucketIndex(10.5)).toBe(1);
    expect(latencyBucketIndex(100)).toBe(3);
    expect(latencyBucketIndex(60_000)).toBe(LATENCY_BUCKET_BOUNDS_MS.length - 1);
  });

  it('puts latencies past the last bound in the overflow bucket', () => {
    expect(latencyBucketIndex(60_001)).toBe(LATENCY_BUCKET_BOUNDS_MS.length);
    expect(LATENCY_BUCKET_COLUMNS[latencyBucketIndex(600_000)]).toBe('latency_gt_60000');
  });

  it('names one column per bound plus the overflow', () => {
    expect(LATENCY_BUCKET_COLUMNS).toHaveLength(LATENCY_BUCKET_BOUNDS_MS.length + 1);
    expect(LATENCY_BUCKET_COLUMNS[0]).toBe('latency_le_10');
  });

  it('reads p95 and p99 inside the bucket that holds the rank', () => {
    // 90 fast (≤ 50 ms), 9 in (250, 500], 1 in (1000, 2500].
    const counts = histogram([...Array(90).fill(40), ...Array(9).fill(300), 2000]);
    const p95 = percentileFromHistogram(counts, 0.95)!;
    expect(p95).toBeGreaterThan(250);
    expect(p95).toBeLessThanOrEqual(500);
    // Rank 95 is the 5th of 9 samples in (250, 500]: 250 + 5/9 * 250.
    expect(p95).toBeCloseTo(250 + (5 / 9) * 250, 6);
    const p99 = percentileFromHistogram(counts, 0.99)!;
    expect(p99).toBeCloseTo(500, 6);
    expect(percentileFromHistogram(counts, 1)).toBeCloseTo(2500, 6);
    expect(percentileFromHistogram(counts, 0.5)).toBeGreaterThan(25);
    expect(percentileFromHistogram(counts, 0.5)).toBeLessThanOrEqual(50);
  });

  it('answers the overflow lower bound when the rank lands past the last bound', () => {
    expect(percentileFromHistogram(histogram([100_000, 200_000]), 0.99)).toBe(60_000);
  });

  it('answers null without samples and refuses a quantile outside (0, 1]', () => {
    expect(percentileFromHistogram(histogram([]), 0.95)).toBeNull();
    expect(() => percentileFromHistogram(histogram([5]), 0)).toThrow(RangeError);
    expect(() => percentileFromHistogram(histogram([5]), 1.5)).toThrow(RangeError);
  });
});
