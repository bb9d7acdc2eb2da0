import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';

/**
 * One model setting of an integration: a catalog model switched on or off, or a custom
 * (fine-tuned, self-hosted) model, optionally with its own pricing.
 */
@Entity('integration_models')
@Index(['integration_id', 'slug'], { unique: true })
export class IntegrationModelEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn() integration_id: string;
  @Column({ type: 'varchar', length: 255 }) slug: string;
  @Column({ type: 'boolean', default: true }) enabled: boolean;
  @Column({ type: 'boolean', default: false }) is_custom: boolean;
  @Column({ type: 'boolean', default: false }) is_finetune: boolean;
  @Column({ type: 'varchar', length: 255, nullable: true }) base_model_slug: string | null;
  @JsonColumn({ nullable: true }) configurations: Record<string, unknown> | null;
  @JsonColumn({ nullable: true }) pricing_config: Record<string, unknown> | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
