import { AppError, ApiKeyType } from '@switchboard/common';
import { KEY_CAPABILITIES } from './capability-matrix';
import { isPermission } from './permissions';

/**
 * Checks requested key scopes: each must be in the catalogue and within what the key kind can
 * ever do. `creatorPermissions`, when given, also bounds them: nobody grants what they lack.
 */
export function validateKeyScopes(
  scopes: readonly string[],
  keyType: ApiKeyType,
  creatorPermissions?: ReadonlySet<string>,
  param = 'scopes',
): void {
  scopes.forEach((scope, index) => {
    if (!isPermission(scope)) {
      throw new AppError(400, 'invalid_scope', `Unknown scope '${scope}'`, `${param}[${index}]`);
    }
    if (!KEY_CAPABILITIES[keyType].has(scope)) {
      throw new AppError(
        400,
        'invalid_scope',
        `Scope '${scope}' is not available to ${keyType} keys`,
        `${param}[${index}]`,
      );
    }
    if (creatorPermissions && !creatorPermissions.has(scope)) {
      throw new AppError(
        403,
        'scope_not_grantable',
        `You cannot grant scope '${scope}', which you do not hold`,
        `${param}[${index}]`,
      );
    }
  });
}
