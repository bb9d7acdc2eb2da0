import { Column, Entity, Index } from 'typeorm';
import { DateTimeColumn, IdColumn, JsonColumn, RefColumn } from '@switchboard/database';

/** One administrative action, allowed or refused. Written in batches, never updated. */
@Entity('audit_logs')
@Index(['organisation_id', 'created_at'])
export class AuditLogEntity {
  @IdColumn() id: string;
  /** Null when the caller could not be authenticated at all. */
  @RefColumn({ nullable: true }) organisation_id: string | null;
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @Column({ type: 'varchar', length: 16 }) actor_type: 'user' | 'api_key' | 'anonymous';
  @RefColumn({ nullable: true }) user_id: string | null;
  @RefColumn({ nullable: true }) api_key_id: string | null;
  @Column({ type: 'varchar', length: 64 }) action: string;
  @Column({ type: 'varchar', length: 64 }) resource_type: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) resource_id: string | null;
  @Column({ type: 'varchar', length: 8 }) method: string;
  @Column({ type: 'varchar', length: 2048 }) uri: string;
  @Column({ type: 'integer' }) response_status_code: number;
  @Column({ type: 'varchar', length: 64, nullable: true }) client_ip: string | null;
  @Column({ type: 'varchar', length: 512, nullable: true }) user_agent: string | null;
  @Column({ type: 'varchar', length: 128 }) request_id: string;
  @Column({ type: 'varchar', length: 128, nullable: true }) trace_id: string | null;
  /** Why it was refused (error code), when it was. */
  @Column({ type: 'varchar', length: 64, nullable: true }) error_code: string | null;
  /** Request body with secrets removed, size-capped. */
  @JsonColumn({ nullable: true }) request_body: unknown;
  @JsonColumn({ nullable: true }) query_params: Record<string, unknown> | null;
  @DateTimeColumn() created_at: Date;
}
