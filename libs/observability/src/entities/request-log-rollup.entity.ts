import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { DateTimeColumn, RefColumn } from '@switchboard/database';

export type RollupGranularity = 'minute' | 'hour';

/**
 * Request counters per minute and per hour bucket and per dimension tuple (organisation,
 * workspace, API key, provider, model, config, prompt, status code, cache status). The LogWriter
 * adds to them in the same transaction as the raw logs; analytics read only these rows.
 *
 * The primary key is a digest of the bucket and the dimension tuple rather than a unique index
 * over the dimension columns: several dimensions are nullable, and both SQLite and PostgreSQL
 * treat NULLs as distinct in unique indexes, so `ON CONFLICT` on those columns would never match
 * a row with a null dimension and would insert duplicates instead.
 */
@Entity('request_log_rollups')
@Index(['organisation_id', 'granularity', 'bucket_start'])
@Index(['workspace_id', 'granularity', 'bucket_start'])
export class RequestLogRollupEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 }) id: string;
  @DateTimeColumn() bucket_start: Date;
  @Column({ type: 'varchar', length: 8 }) granularity: RollupGranularity;
  @RefColumn() organisation_id: string;
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @RefColumn({ nullable: true }) api_key_id: string | null;
  @Column({ type: 'varchar', length: 64, nullable: true }) provider: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) model: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) config_id: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) prompt_id: string | null;
  @Column({ type: 'integer' }) status_code: number;
  @Column({ type: 'varchar', length: 16 }) cache_status: string;

  @Column({ type: 'integer' }) request_count: number;
  @Column({ type: 'integer' }) error_count: number;
  @Column({ type: 'integer' }) cache_hit_count: number;
  /** bigint: token sums of a busy hour can pass 2^31. Read back as strings on PostgreSQL. */
  @Column({ type: 'bigint' }) prompt_tokens: string | number;
  @Column({ type: 'bigint' }) completion_tokens: string | number;
  @Column({ type: 'bigint' }) total_tokens: string | number;
  @Column({ type: 'bigint' }) cached_tokens: string | number;
  @Column({ type: 'bigint' }) reasoning_tokens: string | number;
  @Column({ type: 'decimal', precision: 24, scale: 10 }) cost: string | number;
  @Column({ type: 'bigint' }) latency_sum_ms: string | number;
  /** Requests that reported a time to first byte, and the sum of those times. */
  @Column({ type: 'integer' }) ttfb_count: number;
  @Column({ type: 'bigint' }) ttfb_sum_ms: string | number;

  // Latency histogram: one count per bucket of LATENCY_BUCKET_BOUNDS_MS (latency-histogram.ts).
  @Column({ type: 'integer' }) latency_le_10: number;
  @Column({ type: 'integer' }) latency_le_25: number;
  @Column({ type: 'integer' }) latency_le_50: number;
  @Column({ type: 'integer' }) latency_le_100: number;
  @Column({ type: 'integer' }) latency_le_250: number;
  @Column({ type: 'integer' }) latency_le_500: number;
  @Column({ type: 'integer' }) latency_le_1000: number;
  @Column({ type: 'integer' }) latency_le_2500: number;
  @Column({ type: 'integer' }) latency_le_5000: number;
  @Column({ type: 'integer' }) latency_le_10000: number;
  @Column({ type: 'integer' }) latency_le_30000: number;
  @Column({ type: 'integer' }) latency_le_60000: number;
  @Column({ type: 'integer' }) latency_gt_60000: number;
}
