import { ApiKeyType } from '@switchboard/common';
import { Permission, PERMISSIONS } from './permissions';

/**
 * The capability matrix: what each kind of key can ever do, whoever owns it.
 *
 * | operation                        | admin key            | workspace key      |
 * | manage organisation settings     | yes                  | no                 |
 * | create and manage workspaces     | yes                  | no                 |
 * | list and read workspaces         | yes                  | yes, its own       |
 * | manage users and permissions     | yes                  | no                 |
 * | configs, providers               | yes, all workspaces  | yes, its workspace |
 * | analytics                        | yes, all workspaces  | yes, its workspace |
 * | create and update feedback       | no                   | yes                |
 * | inference (data plane)           | no                   | yes                |
 */
const ORGANISATION_ONLY: readonly Permission[] = [
  'organisation.read',
  'organisation.update',
  'security_settings.read',
  'security_settings.update',
  'users.list',
  'users.read',
  'users.update',
  'users.delete',
  'invites.create',
  'invites.list',
  'invites.read',
  'invites.delete',
  'invites.resend',
  'audit_logs.list',
  'admin_api_keys.manage',
  // Not `workspaces.list`: listing is reading, and the spec's "only admins and owners can list
  // archived workspaces" presumes the others list active ones (the service filters to their own).
  'workspaces.create',
  'workspaces.update',
  'workspaces.delete',
  'integrations.create',
  'integrations.update',
  'integrations.delete',
  'secret_references.create',
  'secret_references.update',
  'secret_references.delete',
  'deployments.create',
  'deployments.update',
  'deployments.delete',
];

/** Workspace keys act in a workspace: they send traffic and give feedback; admin keys administer. */
const WORKSPACE_KEY_ONLY: readonly Permission[] = ['feedback.create', 'feedback.update', 'completions.write'];

const ADMIN_KEY: ReadonlySet<Permission> = new Set(
  PERMISSIONS.filter((p) => !WORKSPACE_KEY_ONLY.includes(p)),
);
const WORKSPACE_KEY: ReadonlySet<Permission> = new Set(
  PERMISSIONS.filter((p) => !ORGANISATION_ONLY.includes(p)),
);

export const KEY_CAPABILITIES: Record<ApiKeyType, ReadonlySet<Permission>> = {
  'organisation-service': ADMIN_KEY,
  'organisation-user': ADMIN_KEY,
  'workspace-service': WORKSPACE_KEY,
  'workspace-user': WORKSPACE_KEY,
};

export function isAdminKeyType(type: ApiKeyType): boolean {
  return type === 'organisation-service' || type === 'organisation-user';
}
