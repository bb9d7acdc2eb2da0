import { Column, Entity, Index } from 'typeorm';
import type { ApiKeyType } from '@switchboard/common';
import {
  CreatedAtColumn,
  DateTimeColumn,
  IdColumn,
  JsonColumn,
  RefColumn,
  UpdatedAtColumn,
} from '@switchboard/database';

export type ApiKeyStatus = 'active' | 'expired' | 'exhausted';

export interface ApiKeyDefaults {
  metadata?: Record<string, unknown>;
  config_id?: string;
  allow_config_override?: boolean;
}

/** Only hashes of keys are stored: the raw value is shown once, at creation or rotation. */
@Entity('api_keys')
@Index(['organisation_id', 'workspace_id'])
@Index(['status', 'expires_at'])
export class ApiKeyEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @RefColumn({ nullable: true }) user_id: string | null;
  @Column({ type: 'varchar', length: 32 }) type: ApiKeyType;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  /** SHA-256 (hex) of the raw key. */
  @Column({ type: 'varchar', length: 64, unique: true }) key_hash: string;
  /** e.g. `sb-Ab12…wxYZ`: enough to recognise a key, useless to an attacker. */
  @Column({ type: 'varchar', length: 32 }) key_mask: string;
  /** After a rotation the previous key keeps working until `previous_key_expires_at`. */
  @Column({ type: 'varchar', length: 64, nullable: true, unique: true }) previous_key_hash: string | null;
  @DateTimeColumn({ nullable: true }) previous_key_expires_at: Date | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: ApiKeyStatus;
  @JsonColumn({ default: '[]' }) scopes: string[];
  @JsonColumn({ nullable: true }) defaults: ApiKeyDefaults | null;
  @JsonColumn({ nullable: true }) rate_limits: unknown[] | null;
  @JsonColumn({ nullable: true }) usage_limits: Record<string, unknown> | null;
  @JsonColumn({ nullable: true }) alert_emails: string[] | null;
  @DateTimeColumn({ nullable: true }) expires_at: Date | null;
  @Column({ type: 'varchar', length: 8, default: 'api' }) creation_mode: 'api' | 'auto' | 'ui';
  @RefColumn({ nullable: true }) created_by_user_id: string | null;
  @RefColumn({ nullable: true }) created_by_key_id: string | null;
  @DateTimeColumn({ nullable: true }) last_rotated_at: Date | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
