import { Column, Entity, Index } from 'typeorm';
import { CreatedAtColumn, IdColumn, JsonColumn, RefColumn, UpdatedAtColumn } from '@switchboard/database';

/** Which workspaces may use an organisation-level integration, with their own limits. */
@Entity('integration_workspaces')
@Index(['integration_id', 'workspace_id'], { unique: true })
@Index(['workspace_id'])
export class IntegrationWorkspaceEntity {
  @IdColumn() id: string;
  @RefColumn() organisation_id: string;
  @RefColumn() integration_id: string;
  @RefColumn() workspace_id: string;
  @Column({ type: 'boolean', default: true }) enabled: boolean;
  @JsonColumn({ nullable: true }) usage_limits: Record<string, unknown>[] | null;
  @JsonColumn({ nullable: true }) rate_limits: Record<string, unknown>[] | null;
  @CreatedAtColumn() created_at: Date;
  @UpdatedAtColumn() updated_at: Date;
}
