import type { ApiKeyEntity, ApiKeyStatus } from './entities/api-key.entity';

/**
 * Expiry first: an expired key is refused at authentication whatever its budget. `exhausted` is
 * never stored (authentication would refuse the key with 401, where the enforcer answers 412
 * naming the budget); it is read from the budget's counters, so a reset or a raised limit shows
 * at once.
 */
export function apiKeyStatus(key: ApiKeyEntity, budgetExhausted: boolean, now = new Date()): ApiKeyStatus {
  if (key.status === 'active' && key.expires_at && key.expires_at <= now) return 'expired';
  if (key.status === 'active' && budgetExhausted) return 'exhausted';
  return key.status;
}

export function toApiKeyResponse(key: ApiKeyEntity, budgetExhausted = false) {
  return {
    object: 'api-key' as const,
    id: key.id,
    key: key.key_mask,
    name: key.name,
    description: key.description,
    type: key.type,
    organisation_id: key.organisation_id,
    workspace_id: key.workspace_id,
    user_id: key.user_id,
    status: apiKeyStatus(key, budgetExhausted),
    scopes: key.scopes,
    defaults: key.defaults,
    rate_limits: key.rate_limits,
    usage_limits: key.usage_limits,
    alert_emails: key.alert_emails,
    creation_mode: key.creation_mode,
    expires_at: key.expires_at ? key.expires_at.toISOString() : null,
    last_rotated_at: key.last_rotated_at ? key.last_rotated_at.toISOString() : null,
    created_at: key.created_at.toISOString(),
    last_updated_at: key.updated_at.toISOString(),
  };
}
