import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';
import type {
  PolicyCondition,
  PolicyGroupBy,
  PolicyStatus,
  RateLimitType,
  RateLimitUnit,
} from '../policy.types';

/** A rate limit: at most `value` requests or tokens per minute, hour or day, per group. */
@Entity('rate_limit_policies')
@Index(['organisation_id', 'workspace_id', 'status'])
export class RateLimitPolicyEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  /** Null for an organisation-wide policy (created by an admin key without a workspace). */
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) name: string | null;
  @JsonColumn() conditions: PolicyCondition[];
  @JsonColumn() group_by: PolicyGroupBy[];
  @Column({ type: 'varchar', length: 16 }) type: RateLimitType;
  @Column({ type: 'varchar', length: 8 }) unit: RateLimitUnit;
  @Column({ type: 'decimal', precision: 24, scale: 6 }) value: string | number;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: PolicyStatus;
  @RefColumn({ nullable: true }) created_by_user_id: string | null;
  @RefColumn({ nullable: true }) created_by_key_id: string | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
