import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';

export type SecretManagerKind = 'hashicorp_vault' | 'aws_sm' | 'azure_kv';

/**
 * A pointer into an external secret manager. The manager's auth configuration (tokens, client
 * secrets, access keys) is sealed by SecretCipher as one JSON object in `auth_config_encrypted`.
 */
@Entity('secret_references')
@Index(['organisation_id', 'slug'], { unique: true })
export class SecretReferenceEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @Column({ type: 'varchar', length: 255 }) slug: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 1024, nullable: true }) description: string | null;
  @Column({ type: 'varchar', length: 32 }) manager_type: SecretManagerKind;
  @Column({ type: 'text' }) auth_config_encrypted: string;
  @Column({ type: 'varchar', length: 1024 }) secret_path: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) secret_key: string | null;
  @Column({ type: 'boolean', default: true }) allow_all_workspaces: boolean;
  /** Workspace ids, when `allow_all_workspaces` is false. */
  @JsonColumn({ default: '[]' }) allowed_workspaces: string[];
  @JsonColumn({ nullable: true }) tags: Record<string, string> | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: 'active';
  @RefColumn({ nullable: true }) created_by_user_id: string | null;
  @RefColumn({ nullable: true }) created_by_key_id: string | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
