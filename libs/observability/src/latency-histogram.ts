/**
 * Latency histogram with fixed bucket bounds. Rollup rows store one count per bucket, so counts
 * from any number of rows add up exactly, and p95/p99 over any time range and grouping can be
 * read from the sums without touching raw logs. The bounds span gateway-only answers (cache
 * hits, a few ms) to long generations (a minute and more).
 */
export const LATENCY_BUCKET_BOUNDS_MS = [
  10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000,
] as const;

/** One column per bucket: `latency_le_<bound>` for bounded buckets, then the overflow bucket. */
export const LATENCY_BUCKET_COLUMNS = [
  ...LATENCY_BUCKET_BOUNDS_MS.map((bound) => `latency_le_${bound}`),
  `latency_gt_${LATENCY_BUCKET_BOUNDS_MS[LATENCY_BUCKET_BOUNDS_MS.length - 1]}`,
] as const;

export const LATENCY_BUCKET_COUNT = LATENCY_BUCKET_COLUMNS.length;

/** Index of the bucket holding `latencyMs`: the first bound it does not exceed, else the overflow bucket. */
export function latencyBucketIndex(latencyMs: number): number {
  const bounds = LATENCY_BUCKET_BOUNDS_MS;
  for (let index = 0; index < bounds.length; index++) {
    if (latencyMs <= bounds[index]) return index;
  }
  return bounds.length;
}

/**
 * The `quantile` (0 < q ≤ 1) latency read from bucket counts, interpolating linearly inside the
 * bucket that holds the target rank. The overflow bucket has no upper bound, so a rank landing
 * there answers its lower bound: the true value is at least that. Null when there are no samples.
 */
export function percentileFromHistogram(counts: readonly number[], quantile: number): number | null {
  if (!(quantile > 0 && quantile <= 1)) throw new RangeError('quantile must be in (0, 1]');
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = quantile * total;
  let cumulative = 0;
  for (let index = 0; index < counts.length; index++) {
    const count = counts[index];
    if (count === 0) continue;
    if (cumulative + count >= rank) {
      const lower = index === 0 ? 0 : LATENCY_BUCKET_BOUNDS_MS[index - 1];
      if (index >= LATENCY_BUCKET_BOUNDS_MS.length) return lower;
      const upper = LATENCY_BUCKET_BOUNDS_MS[index];
      return lower + ((rank - cumulative) / count) * (upper - lower);
    }
    cumulative += count;
  }
  return LATENCY_BUCKET_BOUNDS_MS[LATENCY_BUCKET_BOUNDS_MS.length - 1];
}
