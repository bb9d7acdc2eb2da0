import { AppError } from '@switchboard/common';

export const IdentityErrors = {
  workspaceNotFound: (id: string) =>
    new AppError(404, 'workspace_not_found', `Workspace '${id}' was not found`, 'workspaceId'),
  userNotFound: (id: string) => new AppError(404, 'user_not_found', `User '${id}' was not found`, 'userId'),
  memberNotFound: (id: string) =>
    new AppError(404, 'member_not_found', `User '${id}' is not a member of this workspace`, 'userId'),
  inviteNotFound: (id: string) =>
    new AppError(404, 'invite_not_found', `Invite '${id}' was not found`, 'inviteId'),
  slugTaken: (slug: string) =>
    new AppError(409, 'slug_taken', `A workspace with slug '${slug}' already exists`, 'slug'),
  emailTaken: (email: string) =>
    new AppError(
      409,
      'email_taken',
      `A user with email '${email}' already belongs to this organisation`,
      'email',
    ),
  pendingInviteExists: (email: string) =>
    new AppError(409, 'invite_exists', `A pending invite for '${email}' already exists`, 'email'),
  memberExists: (userId: string) =>
    new AppError(409, 'member_exists', `User '${userId}' is already a member of this workspace`, 'users'),
  lastOwner: () => new AppError(409, 'last_owner', 'The organisation must keep at least one owner', 'role'),
  ownerOnly: () =>
    new AppError(403, 'owner_only', 'Only an owner can grant, change or remove the owner role', 'role'),
  archivedListForbidden: () =>
    new AppError(
      403,
      'archived_forbidden',
      'Only organisation owners and admins can list archived workspaces',
      'status',
    ),
  statusChangeForbidden: () =>
    new AppError(
      403,
      'status_change_forbidden',
      'Only organisation owners and admins can archive or restore a workspace',
      'status',
    ),
  workspaceArchived: (id: string) =>
    new AppError(409, 'workspace_archived', `Workspace '${id}' is archived`, 'workspaceId'),
  defaultWorkspace: () =>
    new AppError(409, 'default_workspace', 'The default workspace cannot be archived', 'workspaceId'),
  roleNotGrantable: (role: string) =>
    new AppError(
      403,
      'role_not_grantable',
      `Only organisation owners and admins and workspace admins can grant the '${role}' role`,
      'role',
    ),
  inviteNotPending: (status: string) =>
    new AppError(409, 'invite_not_pending', `The invite is ${status}, not pending`, 'token'),
  inviteExpired: () =>
    new AppError(422, 'invite_expired', 'The invite has expired; ask for it to be resent', 'token'),
  invalidInviteToken: () => new AppError(404, 'invite_not_found', 'No invite matches this token', 'token'),
};
