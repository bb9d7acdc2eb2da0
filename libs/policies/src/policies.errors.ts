import { AppError } from '@switchboard/common';

/** `Rate limit policy 'Team cap' (…)`, `The budget of api key 'batch' (…)`: what refused, for people. */
export function policyLabel(kind: string, id: string, name: string | null | undefined): string {
  return name ? `${kind} '${name}' (${id})` : `${kind} ${id}`;
}

export const PolicyErrors = {
  rateLimitNotFound: (id: string) =>
    new AppError(404, 'policy_not_found', `Rate limits policy '${id}' was not found`, 'rateLimitsPolicyId'),
  usageLimitNotFound: (id: string) =>
    new AppError(404, 'policy_not_found', `Usage limits policy '${id}' was not found`, 'policyUsageLimitsId'),
  entityNotFound: (id: string) =>
    new AppError(
      404,
      'policy_entity_not_found',
      `Usage limits policy entity '${id}' was not found`,
      'entityId',
    ),
  fieldRequired: (field: 'workspace_id' | 'organisation_id') =>
    new AppError(
      400,
      'invalid_request',
      `${field} is required when not authenticating with an API key (rule: required)`,
      field,
    ),
  otherOrganisation: () =>
    new AppError(
      403,
      'forbidden',
      'organisation_id names another organisation than the one you authenticate for',
      'organisation_id',
    ),
  badCondition: (index: number, message: string) =>
    new AppError(
      400,
      'invalid_request',
      `conditions[${index}].value ${message}`,
      `conditions[${index}].value`,
    ),
  duplicateKey: (field: 'conditions' | 'group_by', index: number, key: string) =>
    new AppError(
      400,
      'invalid_request',
      `${field}[${index}].key '${key}' appears more than once (rule: unique)`,
      `${field}[${index}].key`,
    ),
  thresholdNotBelowLimit: () =>
    new AppError(
      400,
      'invalid_request',
      'alert_threshold must be less than credit_limit (rule: lessThanCreditLimit)',
      'alert_threshold',
    ),
  bothResets: () =>
    new AppError(
      400,
      'invalid_request',
      'periodic_reset_days cannot be combined with periodic_reset (rule: exclusiveWithPeriodicReset)',
      'periodic_reset_days',
    ),
  resetAtWithoutPeriod: () =>
    new AppError(
      400,
      'invalid_request',
      'next_usage_reset_at needs periodic_reset or periodic_reset_days (rule: requiresPeriod)',
      'next_usage_reset_at',
    ),
  resetAtInPast: () =>
    new AppError(
      400,
      'invalid_request',
      'next_usage_reset_at must be in the future (rule: future)',
      'next_usage_reset_at',
    ),

  /** 429: the group is over a rate limit; Retry-After says when enough of the window frees. */
  rateLimited: (
    label: string,
    detail: { type: string; unit: string; limit: number; valueKey: string },
    retryAfterMs: number,
    headers: Record<string, string>,
  ) =>
    new AppError(
      429,
      'rate_limit_exceeded',
      `${label} allows ${detail.limit} ${detail.type} per ${
        { rpm: 'minute', rph: 'hour', rpd: 'day' }[detail.unit] ?? detail.unit
      } for ${detail.valueKey}; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
      null,
      'rate_limit_error',
      { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))), ...headers },
    ),

  /**
   * 412, not 429: an exhausted budget does not come back by waiting a few seconds, and clients
   * (the OpenAI SDKs among them) retry a 429 automatically. The reference implementation answers
   * an exhausted budget with 412 too.
   */
  budgetExhausted: (
    label: string,
    detail: { valueKey: string; used: string; limit: string; resetsAt: Date | null },
  ) =>
    new AppError(
      412,
      'budget_exhausted',
      `${label} is exhausted for ${detail.valueKey}: ${detail.used} of ${
        detail.limit
      } used; ${detail.resetsAt ? `it resets at ${detail.resetsAt.toISOString()}` : 'it does not reset by itself'}`,
      null,
      'budget_exceeded_error',
    ),
  budgetInsufficient: (
    label: string,
    detail: { valueKey: string; remaining: string; limit: string; needed: string },
  ) =>
    new AppError(
      412,
      'budget_insufficient',
      `${label} has ${detail.remaining} of ${detail.limit} left for ${
        detail.valueKey
      } (requests in flight included), less than this request may use (${detail.needed})`,
      null,
      'budget_exceeded_error',
    ),
  storeUnavailable: (message: string) =>
    new AppError(
      503,
      'policy_store_unavailable',
      `Rate and usage limits cannot be checked right now (${message}); the request was not sent`,
      null,
    ),
};
