import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';
import type { WorkspaceSettings } from '../security-settings';

export type WorkspaceStatus = 'active' | 'archived';

export interface UsageLimitSpec {
  credit_limit?: number | null;
  type?: 'cost' | 'tokens';
  alert_threshold?: number | null;
  periodic_reset?: 'weekly' | 'monthly' | null;
  periodic_reset_days?: number | null;
  next_usage_reset_at?: string | null;
}

export interface RateLimitSpec {
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd';
  value: number;
}

@Entity('workspaces')
@Index(['organisation_id', 'slug'], { unique: true })
export class WorkspaceEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 255 }) slug: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: WorkspaceStatus;
  @Column({ type: 'boolean', default: false }) is_default: boolean;
  @JsonColumn({ nullable: true }) defaults: { metadata?: Record<string, string> } | null;
  @JsonColumn({ default: '[]' }) usage_limits: UsageLimitSpec[];
  @JsonColumn({ default: '[]' }) rate_limits: RateLimitSpec[];
  /** Security overrides and user-key policy of this workspace. */
  @JsonColumn({ default: '{}' }) settings: WorkspaceSettings;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
