import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Principal } from '@switchboard/common';
import { OrganisationEntity } from './entities/organisation.entity';
import { WorkspaceEntity } from './entities/workspace.entity';
import { SecuritySettingsDto } from './dto/workspace.dto';
import { SECURITY_SETTING_KEYS, SecuritySettings, resolveSecuritySettings } from './security-settings';
import { WorkspacesService } from './workspaces.service';

/** Sent `null` removes a workspace override (or resets an organisation setting to the default). */
function merge(
  current: Partial<SecuritySettings> | undefined,
  dto: SecuritySettingsDto,
): Partial<SecuritySettings> {
  const next: Partial<SecuritySettings> = { ...current };
  for (const key of SECURITY_SETTING_KEYS) {
    const value = dto[key];
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next;
}

@Injectable()
export class SecuritySettingsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workspaces: WorkspacesService,
  ) {}

  async getOrganisation(principal: Principal) {
    const organisation = await this.organisation(principal.organisationId);
    return {
      object: 'security-settings' as const,
      ...resolveSecuritySettings(organisation.settings.security),
    };
  }

  async updateOrganisation(principal: Principal, dto: SecuritySettingsDto) {
    const organisation = await this.organisation(principal.organisationId);
    organisation.settings = {
      ...organisation.settings,
      security: merge(organisation.settings.security, dto),
    };
    await this.dataSource.getRepository(OrganisationEntity).save(organisation, { transaction: false });
    return {
      object: 'security-settings' as const,
      ...resolveSecuritySettings(organisation.settings.security),
    };
  }

  async getWorkspace(principal: Principal, workspaceIdOrSlug: string) {
    const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug);
    return this.workspaceView(principal.organisationId, workspace);
  }

  async updateWorkspace(principal: Principal, workspaceIdOrSlug: string, dto: SecuritySettingsDto) {
    const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug);
    workspace.settings = { ...workspace.settings, security: merge(workspace.settings.security, dto) };
    await this.dataSource.getRepository(WorkspaceEntity).save(workspace, { transaction: false });
    return this.workspaceView(principal.organisationId, workspace);
  }

  /** What applies in a workspace: defaults, then the organisation's choices, then the workspace's overrides. */
  async effective(organisationId: string, workspaceId: string | null): Promise<SecuritySettings> {
    const organisation = await this.organisation(organisationId);
    if (!workspaceId) return resolveSecuritySettings(organisation.settings.security);
    const workspace = await this.dataSource.getRepository(WorkspaceEntity).findOneBy({ id: workspaceId });
    return resolveSecuritySettings(organisation.settings.security, workspace?.settings.security);
  }

  private async workspaceView(organisationId: string, workspace: WorkspaceEntity) {
    const organisation = await this.organisation(organisationId);
    return {
      object: 'workspace-security-settings' as const,
      workspace_id: workspace.id,
      overrides: workspace.settings.security ?? {},
      effective: resolveSecuritySettings(organisation.settings.security, workspace.settings.security),
    };
  }

  private organisation(organisationId: string) {
    return this.dataSource.getRepository(OrganisationEntity).findOneByOrFail({ id: organisationId });
  }
}
