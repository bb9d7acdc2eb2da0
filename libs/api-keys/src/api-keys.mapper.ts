import type { ApiKeyEntity } from './entities/api-key.entity';

export function toApiKeyResponse(key: ApiKeyEntity) {
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
    status:
      key.expires_at && key.status === 'active' && key.expires_at <= new Date() ? 'expired' : key.status,
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
