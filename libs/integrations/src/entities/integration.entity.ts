import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';

export type IntegrationStatus = 'active' | 'archived';

/** `secret_mappings` entry, with the reference normalised to its id. */
export interface StoredSecretMapping {
  /** `key` or `configurations.<field>` (canonical snake_case field names). */
  target_field: string;
  secret_reference_id: string;
  secret_key: string | null;
  value_format: 'string' | 'json' | null;
}

export interface StoredLimits {
  usage_limits: Record<string, unknown>[] | null;
  rate_limits: Record<string, unknown>[] | null;
}

export interface GlobalWorkspaceAccess extends StoredLimits {
  enabled: boolean;
  /**
   * Whether workspaces made after the grant get a default provider of the integration, as the
   * grant's `create_default_provider` said (absent on older rows: yes, the default).
   */
  create_default_provider?: boolean;
}

/**
 * Organisation-level provider credentials. Every credential is sealed by SecretCipher:
 * `key_encrypted` holds the provider key, `secret_configurations` the sensitive configuration
 * fields (AWS secret, Entra client secret, service account JSON, custom headers) as one sealed
 * JSON object; `configurations` keeps only the non-secret ones (regions, names, URLs).
 */
@Entity('integrations')
@Index(['organisation_id', 'slug'], { unique: true })
export class IntegrationEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  /** Set for workspace-scoped integrations; null for organisation-level ones. */
  @RefColumn({ nullable: true }) workspace_id: string | null;
  @Column({ type: 'varchar', length: 255 }) slug: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  /** Canonical provider adapter id (`openai`, `azure-openai`, `bedrock`, ...). */
  @Column({ type: 'varchar', length: 64 }) ai_provider_id: string;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: IntegrationStatus;
  @Column({ type: 'text', nullable: true }) key_encrypted: string | null;
  @Column({ type: 'varchar', length: 64, nullable: true }) key_mask: string | null;
  @JsonColumn({ default: '{}' }) configurations: Record<string, unknown>;
  @Column({ type: 'text', nullable: true }) secret_configurations: string | null;
  @JsonColumn({ default: '[]' }) secret_mappings: StoredSecretMapping[];
  @JsonColumn({ nullable: true }) pricing_adjustments: Record<string, unknown> | null;
  @JsonColumn({ default: '{}' }) tags: Record<string, string>;
  /** When true every model is allowed except those disabled; when false only enabled ones. */
  @Column({ type: 'boolean', default: true }) allow_all_models: boolean;
  @JsonColumn({ nullable: true }) global_workspace_access: GlobalWorkspaceAccess | null;
  @RefColumn({ nullable: true }) created_by_user_id: string | null;
  @RefColumn({ nullable: true }) created_by_key_id: string | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
