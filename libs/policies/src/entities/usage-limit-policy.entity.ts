import { Column, Entity, Index } from 'typeorm';
import {
  CreatedAtColumn,
  DateTimeColumn,
  IdColumn,
  JsonColumn,
  RefColumn,
  UpdatedAtColumn,
} from '@switchboard/database';
import type { BudgetType, PolicyCondition, PolicyGroupBy, PolicyStatus } from '../policy.types';

/** A budget: at most `credit_limit` dollars or tokens per group, cumulative or reset periodically. */
@Entity('usage_limit_policies')
@Index(['organisation_id', 'workspace_id', 'status'])
@Index(['status', 'next_usage_reset_at'])
export class UsageLimitPolicyEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) name: string | null;
  @JsonColumn() conditions: PolicyCondition[];
  @JsonColumn() group_by: PolicyGroupBy[];
  @Column({ type: 'varchar', length: 16 }) type: BudgetType;
  @Column({ type: 'decimal', precision: 24, scale: 10 }) credit_limit: string | number;
  @Column({ type: 'decimal', precision: 24, scale: 10, nullable: true }) alert_threshold:
    string | number | null;
  @Column({ type: 'varchar', length: 16, nullable: true }) periodic_reset: 'weekly' | 'monthly' | null;
  @Column({ type: 'integer', nullable: true }) periodic_reset_days: number | null;
  @DateTimeColumn({ nullable: true }) next_usage_reset_at: Date | null;
  @DateTimeColumn({ nullable: true }) last_reset_at: Date | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: PolicyStatus;
  @RefColumn({ nullable: true }) created_by_user_id: string | null;
  @RefColumn({ nullable: true }) created_by_key_id: string | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
