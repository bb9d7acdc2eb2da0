import { OrganisationRole, WorkspaceRole } from '@switchboard/common';
import { Permission, PERMISSIONS } from './permissions';

/**
 * The role matrix: what each human role may do, before the key kind and scopes narrow it.
 *
 * | role                 | admin keys | workspace keys      | reach                    |
 * | organisation owner   | yes        | any workspace       | the whole organisation   |
 * | organisation admin   | yes        | any workspace       | the whole organisation   |
 * | workspace admin      | no         | its workspace       | its workspace            |
 * | workspace manager    | no         | its workspace       | its workspace            |
 * | workspace member     | no         | no                  | limited workspace access |
 */
const ALL: readonly Permission[] = PERMISSIONS;

/** Everything a workspace manager does inside the workspace it manages. */
const WORKSPACE_MANAGER: readonly Permission[] = [
  'workspaces.list',
  'workspaces.read',
  'workspace_members.create',
  'workspace_members.list',
  'workspace_members.read',
  'workspace_members.update',
  'workspace_members.delete',
  'api_keys.create',
  'api_keys.list',
  'api_keys.read',
  'api_keys.update',
  'api_keys.delete',
  'api_keys.rotate',
  'configs.create',
  'configs.list',
  'configs.read',
  'configs.update',
  'configs.delete',
  'providers.create',
  'providers.list',
  'providers.read',
  'providers.update',
  'providers.delete',
  'virtual_keys.create',
  'virtual_keys.list',
  'virtual_keys.read',
  'virtual_keys.update',
  'virtual_keys.delete',
  'integrations.list',
  'integrations.read',
  'secret_references.list',
  'secret_references.read',
  'model_pricing.read',
  'policies.create',
  'policies.list',
  'policies.read',
  'policies.update',
  'policies.delete',
  'guardrails.create',
  'guardrails.list',
  'guardrails.read',
  'guardrails.update',
  'guardrails.delete',
  'prompts.create',
  'prompts.list',
  'prompts.read',
  'prompts.update',
  'prompts.delete',
  'prompts.render',
  'mcp.create',
  'mcp.list',
  'mcp.read',
  'mcp.update',
  'mcp.delete',
  'mcp.invoke',
  'deployments.list',
  'deployments.read',
  'logs.list',
  'logs.view',
  'logs.export',
  'logs.write',
  'analytics.view',
  'feedback.create',
  'feedback.update',
  'completions.write',
];

/** A member uses the workspace; prompt writing and data visibility are further governed by security settings. */
const WORKSPACE_MEMBER: readonly Permission[] = [
  'workspaces.list',
  'workspaces.read',
  'workspace_members.list',
  'workspace_members.read',
  'configs.list',
  'configs.read',
  'providers.list',
  'providers.read',
  'virtual_keys.list',
  'virtual_keys.read',
  'model_pricing.read',
  'policies.list',
  'policies.read',
  'guardrails.list',
  'guardrails.read',
  'prompts.create',
  'prompts.list',
  'prompts.read',
  'prompts.update',
  'prompts.delete',
  'prompts.render',
  'mcp.list',
  'mcp.read',
  'mcp.invoke',
  'logs.list',
  'logs.view',
  'logs.write',
  'analytics.view',
  'feedback.create',
  'feedback.update',
  'completions.write',
];

export const ORGANISATION_ROLE_PERMISSIONS: Record<OrganisationRole, ReadonlySet<Permission>> = {
  owner: new Set(ALL),
  admin: new Set(ALL),
  // An organisation member acts only through the workspaces they belong to.
  member: new Set<Permission>(['organisation.read']),
};

export const WORKSPACE_ROLE_PERMISSIONS: Record<WorkspaceRole, ReadonlySet<Permission>> = {
  admin: new Set<Permission>([...WORKSPACE_MANAGER, 'workspaces.update']),
  manager: new Set(WORKSPACE_MANAGER),
  member: new Set(WORKSPACE_MEMBER),
};

export function isOrganisationAdmin(role: OrganisationRole): boolean {
  return role === 'owner' || role === 'admin';
}

/** Roles that may create workspace keys in their workspace. */
export function managesWorkspace(role: WorkspaceRole | null): boolean {
  return role === 'admin' || role === 'manager';
}
