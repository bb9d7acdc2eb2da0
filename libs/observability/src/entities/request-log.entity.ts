import { Column, Entity, Index } from 'typeorm';
import { DateTimeColumn, IdColumn, JsonColumn, RefColumn } from '@switchboard/database';

/**
 * One data-plane request (or one custom log sent to POST /logs). Written in batches by the
 * LogWriter and never updated. Only log search and log detail read this table; analytics read
 * the rollups.
 */
@Entity('request_logs')
@Index(['organisation_id', 'created_at'])
@Index(['workspace_id', 'created_at'])
@Index(['trace_id'])
export class RequestLogEntity {
  @IdColumn() id: string;
  @Column({ type: 'varchar', length: 128 }) request_id: string;
  @Column({ type: 'varchar', length: 128 }) trace_id: string;
  @Column({ type: 'varchar', length: 128, nullable: true }) span_id: string | null;
  @Column({ type: 'varchar', length: 128, nullable: true }) parent_span_id: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) span_name: string | null;
  @RefColumn() organisation_id: string;
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @RefColumn({ nullable: true }) api_key_id: string | null;
  @RefColumn({ nullable: true }) user_id: string | null;
  @Column({ type: 'varchar', length: 64, nullable: true }) provider: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) provider_slug: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) model: string | null;
  /** Free text rather than a uuid: inline and slug-addressed configs and prompts land here too. */
  @Column({ type: 'varchar', length: 255, nullable: true }) config_id: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) prompt_id: string | null;
  @Column({ type: 'varchar', length: 64 }) route: string;
  @Column({ type: 'varchar', length: 16 }) method: string;
  @Column({ type: 'varchar', length: 2048 }) path: string;
  @Column({ type: 'integer' }) status: number;
  @Column({ type: 'boolean' }) is_stream: boolean;
  @Column({ type: 'integer' }) latency_ms: number;
  @Column({ type: 'integer', nullable: true }) ttfb_ms: number | null;
  @Column({ type: 'integer' }) prompt_tokens: number;
  @Column({ type: 'integer' }) completion_tokens: number;
  @Column({ type: 'integer' }) total_tokens: number;
  @Column({ type: 'integer' }) cached_tokens: number;
  @Column({ type: 'integer' }) reasoning_tokens: number;
  /** US dollars; exact decimal so sums over many requests do not drift. Null when pricing is unknown. */
  @Column({ type: 'decimal', precision: 20, scale: 10, nullable: true }) cost: string | number | null;
  @Column({ type: 'varchar', length: 16 }) cache_status: string;
  @Column({ type: 'integer' }) retry_count: number;
  @JsonColumn({ nullable: true }) metadata: Record<string, string> | null;
  @Column({ type: 'text', nullable: true }) request_body: string | null;
  @Column({ type: 'text', nullable: true }) response_body: string | null;
  @Column({ type: 'varchar', length: 64, nullable: true }) error_code: string | null;
  @Column({ type: 'text', nullable: true }) error_message: string | null;
  @DateTimeColumn() created_at: Date;
}
