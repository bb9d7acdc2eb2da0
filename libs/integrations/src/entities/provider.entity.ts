import { Column, Entity, Index } from 'typeorm';
import {
  CreatedAtColumn,
  DateTimeColumn,
  IdColumn,
  JsonColumn,
  RefColumn,
  UpdatedAtColumn,
} from '@switchboard/database';
import type { StoredSecretMapping } from './integration.entity';

export type ProviderStatus = 'active' | 'exhausted' | 'expired' | 'disabled';
/** `provider`: made through /providers (or as an integration's default); `virtual_key`: through /virtual-keys. */
export type ProviderKind = 'provider' | 'virtual_key';

/**
 * A workspace's provider instance, named by clients as `x-gateway-provider: @<slug>` or
 * `x-gateway-virtual-key: <slug>`. Providers replace virtual keys, so both live here and share
 * one slug space per workspace. A row either points at an integration (its credentials) or, for
 * the older virtual keys, carries its own: sealed the same way as an integration's.
 */
@Entity('providers')
@Index(['workspace_id', 'slug'], { unique: true })
@Index(['integration_id'])
@Index(['organisation_id', 'workspace_id'])
export class ProviderEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn() workspace_id: string;
  @RefColumn({ nullable: true }) integration_id: string | null;
  @Column({ type: 'varchar', length: 16, default: 'provider' }) kind: ProviderKind;
  @Column({ type: 'varchar', length: 255 }) slug: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'text', nullable: true }) note: string | null;
  /** Canonical provider adapter id; for integration-backed rows, the integration's. */
  @Column({ type: 'varchar', length: 64 }) ai_provider_id: string;
  @Column({ type: 'text', nullable: true }) key_encrypted: string | null;
  @Column({ type: 'varchar', length: 64, nullable: true }) key_mask: string | null;
  /** Non-secret provider settings, canonical snake_case names (as integration configurations). */
  @JsonColumn({ default: '{}' }) configurations: Record<string, unknown>;
  @Column({ type: 'text', nullable: true }) secret_configurations: string | null;
  @JsonColumn({ default: '[]' }) secret_mappings: StoredSecretMapping[];
  @JsonColumn({ default: '{}' }) tags: Record<string, string>;
  @JsonColumn({ nullable: true }) usage_limits: Record<string, unknown> | null;
  @JsonColumn({ nullable: true }) rate_limits: Record<string, unknown>[] | null;
  @DateTimeColumn({ nullable: true }) expires_at: Date | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: ProviderStatus;
  /** Made automatically when its integration was granted to the workspace. */
  @Column({ type: 'boolean', default: false }) is_default: boolean;
  @RefColumn({ nullable: true }) created_by_user_id: string | null;
  @RefColumn({ nullable: true }) created_by_key_id: string | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
