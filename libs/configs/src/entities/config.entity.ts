import { Column, Entity, Index } from 'typeorm';
import {
  CreatedAtColumn,
  IS_POSTGRES,
  IdColumn,
  JsonColumn,
  RefColumn,
  UpdatedAtColumn,
} from '@switchboard/database';
import { sealedConfigTransformer } from '../config-secrets';
import type { GatewayConfig } from '../config.types';

export type ConfigStatus = 'active' | 'archived';

/** A stored gateway config; `config` is its current version, validated when written. */
@Entity('configs')
@Index(['organisation_id', 'slug'], { unique: true })
@Index(['workspace_id'])
// One default per workspace, enforced by the database so concurrent updates cannot make two.
@Index('IDX_configs_one_default_per_workspace', ['workspace_id'], {
  unique: true,
  where: IS_POSTGRES ? '"is_default" = true' : '"is_default" = 1',
})
export class ConfigEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn() workspace_id: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 255 }) slug: string;
  @JsonColumn({ transformer: sealedConfigTransformer }) config: GatewayConfig;
  @Column({ type: 'boolean', default: false }) is_default: boolean;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: ConfigStatus;
  /** The current version's id and number (1 for the first). */
  @RefColumn() version_id: string;
  @Column({ type: 'integer', default: 1 }) version: number;
  @RefColumn({ nullable: true }) owner_id: string | null;
  @RefColumn({ nullable: true }) updated_by: string | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
