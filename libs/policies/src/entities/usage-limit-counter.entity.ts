import { Column, Entity, Index } from 'typeorm';
import {
  CreatedAtColumn,
  DateTimeColumn,
  IdColumn,
  JsonColumn,
  RefColumn,
  UpdatedAtColumn,
} from '@switchboard/database';
import type { BudgetType, EntityStatus } from '../policy.types';

/**
 * One tracked entity of a budget (the API's "policy entity"): the usage of one group value
 * (`api_key:…`, `workspace_id:…|metadata.team:…`) in the current period. Budgets declared inline
 * on API keys, workspaces and providers have rows too, under a `inline:<kind>:<id>:…` policy key.
 *
 * `epoch` counts resets: live counters are keyed by it and batched usage writes are conditional
 * on it, so usage recorded before a reset never leaks into the new period.
 */
@Entity('usage_limit_counters')
@Index(['policy_key', 'value_key'], { unique: true })
@Index(['next_reset_at'])
export class UsageLimitCounterEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn({ nullable: true }) workspace_id: string | null;
  /** The usage-limit policy id, or `inline:<kind>:<id>:<type>:<rule>` for inline limits. */
  @Column({ type: 'varchar', length: 200 }) policy_key: string;
  @RefColumn({ nullable: true }) policy_id: string | null;
  @Column({ type: 'varchar', length: 600 }) value_key: string;
  /** The group_by values the value key is made of, e.g. `{ "api_key": "…" }`. */
  @JsonColumn() group_values: Record<string, string>;
  @Column({ type: 'varchar', length: 16 }) type: BudgetType;
  @Column({ type: 'decimal', precision: 24, scale: 10, default: 0 }) current_usage: string | number;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: EntityStatus;
  @Column({ type: 'integer', default: 0 }) epoch: number;
  @Column({ type: 'boolean', default: false }) threshold_alert_sent: boolean;
  @Column({ type: 'boolean', default: false }) exhausted_alert_sent: boolean;
  /**
   * For inline budgets (declared on keys, workspaces, providers): the limits last applied, so a
   * raised limit is noticed on the next request and re-arms the alerts, as a policy update does.
   */
  @Column({ type: 'decimal', precision: 24, scale: 10, nullable: true }) credit_limit: string | number | null;
  @Column({ type: 'decimal', precision: 24, scale: 10, nullable: true }) alert_threshold:
    string | number | null;
  /** `weekly`, `monthly`, `days:<n>`, or null for a cumulative budget. */
  @Column({ type: 'varchar', length: 16, nullable: true }) reset_rule: string | null;
  @DateTimeColumn({ nullable: true }) next_reset_at: Date | null;
  @DateTimeColumn({ nullable: true }) last_reset_at: Date | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
