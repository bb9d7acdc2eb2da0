import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrganisationRole, WorkspaceRole } from '@switchboard/common';
import { UserEntity } from './entities/user.entity';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { WorkspaceEntity } from './entities/workspace.entity';
import { ApiKeyPolicy, resolveApiKeyPolicy } from './security-settings';

export interface PrincipalFacts {
  user: { id: string; email: string; role: OrganisationRole } | null;
  workspace: {
    id: string;
    name: string;
    status: 'active' | 'archived';
    usageLimits: unknown[];
    rateLimits: unknown[];
  } | null;
  workspaceRole: WorkspaceRole | null;
}

/** What authentication needs to know about a key's owner and workspace; read on a cold cache only. */
@Injectable()
export class IdentityLookupService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async facts(
    organisationId: string,
    userId: string | null,
    workspaceId: string | null,
  ): Promise<PrincipalFacts> {
    const [user, workspace, member] = await Promise.all([
      userId
        ? this.dataSource
            .getRepository(UserEntity)
            .findOne({ where: { organisation_id: organisationId, id: userId } })
        : null,
      workspaceId
        ? this.dataSource
            .getRepository(WorkspaceEntity)
            .findOne({ where: { organisation_id: organisationId, id: workspaceId } })
        : null,
      userId && workspaceId
        ? this.dataSource
            .getRepository(WorkspaceMemberEntity)
            .findOne({ where: { workspace_id: workspaceId, user_id: userId } })
        : null,
    ]);
    return {
      user: user ? { id: user.id, email: user.email, role: user.role } : null,
      workspace: workspace
        ? {
            id: workspace.id,
            name: workspace.name,
            status: workspace.status,
            usageLimits: workspace.usage_limits ?? [],
            rateLimits: workspace.rate_limits ?? [],
          }
        : null,
      workspaceRole: member?.role ?? null,
    };
  }

  /** The user-key policy of a workspace (limits on count and expiry). */
  async apiKeyPolicy(organisationId: string, workspaceId: string): Promise<ApiKeyPolicy> {
    const workspace = await this.dataSource
      .getRepository(WorkspaceEntity)
      .findOne({ where: { organisation_id: organisationId, id: workspaceId } });
    return resolveApiKeyPolicy(undefined, workspace?.settings.api_keys);
  }
}
