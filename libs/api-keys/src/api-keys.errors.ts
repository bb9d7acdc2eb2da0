import { AppError } from '@switchboard/common';

export const ApiKeyErrors = {
  notFound: (id: string) => new AppError(404, 'api_key_not_found', `API key '${id}' was not found`, 'id'),
  adminKeysForbidden: () =>
    new AppError(
      403,
      'admin_keys_forbidden',
      'Only organisation owners and admins can manage admin API keys',
      null,
    ),
  workspaceRequired: () =>
    new AppError(400, 'workspace_required', 'workspace_id is required for workspace keys', 'workspace_id'),
  workspaceNotAllowed: () =>
    new AppError(
      400,
      'workspace_not_allowed',
      'Organisation keys do not belong to a workspace: omit workspace_id',
      'workspace_id',
    ),
  userIdNotAllowed: () =>
    new AppError(400, 'user_id_not_allowed', 'Service keys do not belong to a user: omit user_id', 'user_id'),
  userRequired: () => new AppError(400, 'user_required', 'user_id is required for user keys', 'user_id'),
  userNotFound: (id: string) => new AppError(404, 'user_not_found', `User '${id}' was not found`, 'user_id'),
  userNotMember: (id: string) =>
    new AppError(422, 'user_not_member', `User '${id}' is not a member of the workspace`, 'user_id'),
  userNotAdmin: (id: string) =>
    new AppError(
      422,
      'user_not_admin',
      `User '${id}' is not an organisation owner or admin, so cannot hold an admin key`,
      'user_id',
    ),
  otherUsersKey: () =>
    new AppError(
      403,
      'other_user_key',
      'Only workspace managers and organisation admins can create keys for other users',
      'user_id',
    ),
  workspaceArchived: () =>
    new AppError(409, 'workspace_archived', 'The workspace is archived', 'workspace_id'),
  expiryInPast: () => new AppError(400, 'invalid_expiry', 'expires_at must be in the future', 'expires_at'),
  expiryTooLate: (maxDays: number) =>
    new AppError(
      400,
      'invalid_expiry',
      `expires_at exceeds the workspace maximum of ${maxDays} days`,
      'expires_at',
    ),
  tooManyUserKeys: (max: number) =>
    new AppError(
      409,
      'user_key_limit',
      `This user already has the workspace maximum of ${max} active keys`,
      null,
    ),
  badType: (type: string, subType: string) =>
    new AppError(
      400,
      'invalid_key_type',
      `Unknown key type '${type}/${subType}': use organisation|workspace and service|user`,
      'type',
    ),
};
