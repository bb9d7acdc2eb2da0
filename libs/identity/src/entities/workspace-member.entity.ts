import { Column, Entity, Index } from 'typeorm';
import type { WorkspaceRole } from '@switchboard/common';
import { CreatedAtColumn, IdColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';

@Entity('workspace_members')
@Index(['workspace_id', 'user_id'], { unique: true })
@Index(['user_id'])
export class WorkspaceMemberEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn() workspace_id: string;
  @RefColumn() user_id: string;
  @Column({ type: 'varchar', length: 16 }) role: WorkspaceRole;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
