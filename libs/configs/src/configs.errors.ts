import { AppError } from '@switchboard/common';

/** Config validation failures carry code AB01 (spec, Errors). */
export const CONFIG_VALIDATION_CODE = 'AB01';

export const ConfigErrors = {
  /** `path` names the bad field inside the config object, e.g. `targets[1].retry.attempts`. */
  invalid: (path: string, problem: string, rule: string) =>
    new AppError(
      400,
      CONFIG_VALIDATION_CODE,
      `${path || 'config'} ${problem} (rule: ${rule})`,
      path || 'config',
    ),
  invalidHeaderJson: () =>
    new AppError(
      400,
      CONFIG_VALIDATION_CODE,
      'x-gateway-config is neither a config id, a slug, nor valid JSON (rule: json)',
      'x-gateway-config',
    ),
  notFound: (ref: string) => new AppError(404, 'config_not_found', `Config '${ref}' was not found`, 'slug'),
  /** A config named by a request (header or API key default) that this workspace does not have. */
  requestConfigNotFound: (ref: string, param: string) =>
    new AppError(404, 'config_not_found', `No active config '${ref}' was found in this workspace`, param),
  overrideNotAllowed: () =>
    new AppError(
      403,
      'config_override_not_allowed',
      'This API key has a default config and does not allow x-gateway-config to replace it',
      'x-gateway-config',
    ),
  workspaceRequired: () =>
    new AppError(
      400,
      'workspace_required',
      'workspace_id is required when the caller is not bound to a workspace',
      'workspace_id',
    ),
  workspaceArchived: () =>
    new AppError(409, 'workspace_archived', 'The workspace is archived', 'workspace_id'),
  slugTaken: (slug: string) =>
    new AppError(409, 'config_slug_taken', `A config with slug '${slug}' already exists`, 'slug'),
  defaultMustBeActive: () =>
    new AppError(
      409,
      'config_archived',
      'An archived config cannot be the workspace default: set status to active as well',
      'is_default',
    ),
  requestTimeout: (ms: number) =>
    new AppError(
      408,
      'request_timeout',
      `The provider did not answer within the config's request_timeout of ${ms} ms`,
      null,
      'timeout_error',
    ),
};
