import { ApiKeyType, OrganisationRole, WorkspaceRole } from '@switchboard/common';
import { KEY_CAPABILITIES } from './capability-matrix';
import { Permission } from './permissions';
import {
  ORGANISATION_ROLE_PERMISSIONS,
  WORKSPACE_ROLE_PERMISSIONS,
  isOrganisationAdmin,
} from './role-matrix';

export interface PermissionInputs {
  keyType: ApiKeyType;
  scopes: readonly string[];
  /** The owner's organisation role, for user keys. */
  organisationRole?: OrganisationRole;
  /** The owner's role in the key's workspace, for workspace user keys. */
  workspaceRole?: WorkspaceRole | null;
}

/** Capability (key kind) ∩ role (owner) ∩ scopes (the key). Computed once per key and cached. */
export function effectivePermissions(inputs: PermissionInputs): Set<Permission> {
  const capabilities = KEY_CAPABILITIES[inputs.keyType];
  const scopes = new Set(inputs.scopes);
  const result = new Set<Permission>();
  let roleAllows: (permission: Permission) => boolean = () => true;
  if (inputs.keyType === 'organisation-user') {
    const role = inputs.organisationRole ?? 'member';
    roleAllows = (permission) => ORGANISATION_ROLE_PERMISSIONS[role].has(permission);
  } else if (inputs.keyType === 'workspace-user') {
    const orgRole = inputs.organisationRole ?? 'member';
    // Owners and admins keep their reach inside any workspace they hold a key for.
    if (!isOrganisationAdmin(orgRole)) {
      const workspaceRole = inputs.workspaceRole;
      roleAllows = (permission) =>
        workspaceRole ? WORKSPACE_ROLE_PERMISSIONS[workspaceRole].has(permission) : false;
    }
  }
  for (const permission of capabilities) {
    if (scopes.has(permission) && roleAllows(permission)) result.add(permission);
  }
  return result;
}
