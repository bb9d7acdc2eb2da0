import { Column, Entity } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, UpdatedAtColumn } from '@switchboard/database';
import type { OrganisationSettings } from '../security-settings';

@Entity('organisations')
export class OrganisationEntity {
  @IdColumn() id: string;
  @Column({ type: 'varchar', length: 255 }) name: string;
  @Column({ type: 'varchar', length: 255, unique: true }) slug: string;
  /** Security settings and API key policy; absent keys take the spec's defaults. */
  @JsonColumn({ default: '{}' }) settings: OrganisationSettings;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
