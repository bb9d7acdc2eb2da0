import { AppError } from '@switchboard/common';

export const AuthErrors = {
  missingKey: () =>
    new AppError(
      401,
      'missing_api_key',
      'Missing API key: send it in the x-gateway-api-key header',
      'x-gateway-api-key',
    ),
  invalidKey: () =>
    new AppError(401, 'invalid_api_key', 'The API key is invalid or has been revoked', 'x-gateway-api-key'),
  expiredKey: () => new AppError(401, 'expired_api_key', 'The API key has expired', 'x-gateway-api-key'),
  archivedWorkspace: () =>
    new AppError(401, 'workspace_archived', "The API key's workspace is archived", 'x-gateway-api-key'),
  missingPermission: (permission: string) =>
    new AppError(403, 'permission_denied', `This API key lacks the '${permission}' permission`, null),
  routeNotExposed: () => new AppError(403, 'route_not_exposed', 'This route is not exposed', null),
};
