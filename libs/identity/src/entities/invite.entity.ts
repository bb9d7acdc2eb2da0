import { Column, Entity, Index } from 'typeorm';
import type { OrganisationRole, WorkspaceRole } from '@switchboard/common';
import {
  CreatedAtColumn,
  DateTimeColumn,
  IdColumn,
  JsonColumn,
  RefColumn,
  UpdatedAtColumn,
} from '@switchboard/database';

export type InviteStatus = 'pending' | 'accepted' | 'cancelled' | 'expired';

@Entity('invites')
@Index(['organisation_id', 'email'])
export class InviteEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @Column({ type: 'varchar', length: 320 }) email: string;
  @Column({ type: 'varchar', length: 16 }) role: Exclude<OrganisationRole, 'owner'>;
  @JsonColumn({ default: '[]' }) workspaces: { workspace_id: string; role: WorkspaceRole }[];
  @JsonColumn({ nullable: true }) workspace_api_key_details: { scopes: string[] } | null;
  /** SHA-256 of the single-use token; the token itself is shown once. */
  @Column({ type: 'varchar', length: 64, unique: true }) token_hash: string;
  @Column({ type: 'varchar', length: 16, default: 'pending' }) status: InviteStatus;
  @RefColumn({ nullable: true }) invited_by: string | null;
  @DateTimeColumn() expires_at: Date;
  @DateTimeColumn({ nullable: true }) accepted_at: Date | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
