import type { InviteEntity } from './entities/invite.entity';
import type { UserEntity } from './entities/user.entity';
import type { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import type { WorkspaceEntity } from './entities/workspace.entity';
import { resolveApiKeyPolicy } from './security-settings';

export function toUserResponse(user: UserEntity, workspaceIds: string[]) {
  return {
    object: 'user' as const,
    id: user.id,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    role: user.role,
    workspace_ids: workspaceIds,
    created_at: user.created_at.toISOString(),
    last_updated_at: user.updated_at.toISOString(),
  };
}

export function toWorkspaceResponse(workspace: WorkspaceEntity) {
  return {
    object: 'workspace' as const,
    id: workspace.id,
    slug: workspace.slug,
    name: workspace.name,
    description: workspace.description,
    status: workspace.status,
    is_default: workspace.is_default ? 1 : 0,
    defaults: workspace.defaults,
    usage_limits: workspace.usage_limits,
    rate_limits: workspace.rate_limits,
    api_key_policy: resolveApiKeyPolicy(undefined, workspace.settings.api_keys),
    created_at: workspace.created_at.toISOString(),
    last_updated_at: workspace.updated_at.toISOString(),
  };
}

export function toMemberResponse(member: WorkspaceMemberEntity, user: UserEntity) {
  return {
    object: 'workspace-member' as const,
    id: user.id,
    user_id: user.id,
    workspace_id: member.workspace_id,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    role: member.role,
    organisation_role: user.role,
    created_at: member.created_at.toISOString(),
    last_updated_at: member.updated_at.toISOString(),
  };
}

/** Pending invites past their expiry read as expired even before anything rewrites them. */
export function effectiveInviteStatus(invite: InviteEntity, now = new Date()) {
  return invite.status === 'pending' && invite.expires_at <= now ? 'expired' : invite.status;
}

export function toInviteResponse(invite: InviteEntity) {
  return {
    object: 'invite' as const,
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status: effectiveInviteStatus(invite),
    workspaces: invite.workspaces,
    workspace_api_key_details: invite.workspace_api_key_details,
    invited_by: invite.invited_by,
    created_at: invite.created_at.toISOString(),
    expires_at: invite.expires_at.toISOString(),
    accepted_at: invite.accepted_at ? invite.accepted_at.toISOString() : null,
  };
}
