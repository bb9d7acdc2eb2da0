import { Column, Entity, Index } from 'typeorm';
import type { OrganisationRole } from '@switchboard/common';
import { CreatedAtColumn, IdColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';

@Entity('users')
@Index(['organisation_id', 'email'], { unique: true })
export class UserEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  /** Stored lower-cased so uniqueness ignores case. */
  @Column({ type: 'varchar', length: 320 }) email: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) first_name: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) last_name: string | null;
  @Column({ type: 'varchar', length: 16 }) role: OrganisationRole;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
