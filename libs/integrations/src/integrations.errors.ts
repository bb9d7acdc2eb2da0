import { AppError } from '@switchboard/common';

/** Error codes of the integrations area. Validation errors name the field and the rule. */
export const IntegrationErrors = {
  invalidField: (param: string, problem: string, rule: string) =>
    new AppError(400, 'invalid_request', `${param} ${problem} (rule: ${rule})`, param),
  unknownProvider: (name: string, param: string) =>
    new AppError(
      400,
      'invalid_request',
      `${param} '${name}' is not a supported provider (rule: isProvider)`,
      param,
    ),
  integrationNotFound: (slug: string, param = 'slug') =>
    new AppError(404, 'integration_not_found', `Integration '${slug}' was not found`, param),
  providerNotFound: (slug: string, param = 'slug') =>
    new AppError(404, 'provider_not_found', `Provider '${slug}' was not found`, param),
  virtualKeyNotFound: (slug: string) =>
    new AppError(404, 'virtual_key_not_found', `Virtual key '${slug}' was not found`, 'slug'),
  secretReferenceNotFound: (id: string, param = 'secretReferenceId') =>
    new AppError(404, 'secret_reference_not_found', `Secret reference '${id}' was not found`, param),
  modelNotFound: (provider: string, model: string) =>
    new AppError(
      404,
      'model_not_found',
      `No pricing for model '${model}' of provider '${provider}'`,
      'model',
    ),
  integrationSlugTaken: (slug: string) =>
    new AppError(409, 'slug_taken', `An integration with slug '${slug}' already exists`, 'slug'),
  providerSlugTaken: (slug: string, param = 'slug') =>
    new AppError(
      409,
      'slug_taken',
      `A provider or virtual key with slug '${slug}' already exists in this workspace`,
      param,
    ),
  secretReferenceSlugTaken: (slug: string) =>
    new AppError(409, 'slug_taken', `A secret reference with slug '${slug}' already exists`, 'slug'),
  workspaceRequired: () =>
    new AppError(
      400,
      'workspace_required',
      'workspace_id is required when calling with an organisation-wide key (rule: isDefined)',
      'workspace_id',
    ),
  workspaceArchived: (id: string) =>
    new AppError(409, 'workspace_archived', `Workspace '${id}' is archived`, 'workspace_id'),
  integrationNotGranted: (slug: string) =>
    new AppError(
      403,
      'integration_not_granted',
      `Integration '${slug}' is not enabled for this workspace: grant it with PUT /integrations/${slug}/workspaces`,
      'integration_id',
    ),
  integrationArchived: (slug: string) =>
    new AppError(409, 'integration_archived', `Integration '${slug}' is archived`, 'integration_id'),
  secretReferenceInUse: (id: string, users: string[]) =>
    new AppError(
      409,
      'secret_reference_in_use',
      `Secret reference '${id}' is used by ${users.join(', ')}: remove those mappings first`,
      'secretReferenceId',
    ),
  secretReferenceNotAllowed: (id: string, param: string) =>
    new AppError(
      403,
      'secret_reference_not_allowed',
      `Secret reference '${id}' may not be used by this workspace (rule: allowedWorkspaces)`,
      param,
    ),
  modelsNotFound: (slugs: string[]) =>
    new AppError(
      404,
      'model_not_found',
      `No model setting for ${slugs.map((s) => `'${s}'`).join(', ')}`,
      'slugs',
    ),
};
