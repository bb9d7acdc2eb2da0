import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn } from '@switchboard/database';
import { sealedConfigTransformer } from '../config-secrets';
import type { GatewayConfig } from '../config.types';
import type { ConfigStatus } from './config.entity';

/** Every state a config has been in: one row per create and per update, never changed afterwards. */
@Entity('config_versions')
@Index(['config_id', 'version'], { unique: true })
export class ConfigVersionEntity {
  @IdColumn() id: string;
  @RefColumn() config_id: string;
  @RefColumn() organisation_id: string;
  @RefColumn() workspace_id: string;
  @Column({ type: 'integer' }) version: number;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @JsonColumn({ transformer: sealedConfigTransformer }) config: GatewayConfig;
  @Column({ type: 'boolean', default: false }) is_default: boolean;
  @Column({ type: 'varchar', length: 16 }) status: ConfigStatus;
  /** Who made this version (a user, when the caller had one). */
  @RefColumn({ nullable: true }) created_by: string | null;
  @CreatedAtColumn() created_at: Date;
}
