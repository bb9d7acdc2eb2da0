import type { IntegrationEntity } from './entities/integration.entity';
import type { IntegrationModelEntity } from './entities/integration-model.entity';
import type { ProviderEntity } from './entities/provider.entity';
import { maskSettings, toCamelSettings } from './provider-settings';
import { mappingsForResponse } from './secret-references.service';

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

export function toIntegrationListItem(row: IntegrationEntity) {
  return {
    object: 'integration' as const,
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    ai_provider_id: row.ai_provider_id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    status: row.status,
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    last_updated_at: row.updated_at.toISOString(),
  };
}

/** Detail: sensitive configuration answered masked (`masked_<field>`), the key as `masked_key`. */
export function toIntegrationDetail(
  row: IntegrationEntity,
  secretSettings: Record<string, unknown>,
  workspaceCount: number,
) {
  const global = row.global_workspace_access;
  return {
    ...toIntegrationListItem(row),
    masked_key: row.key_mask,
    configurations: { ...row.configurations, ...maskSettings(secretSettings) },
    global_workspace_access_settings: global
      ? { enabled: global.enabled, usage_limits: global.usage_limits, rate_limits: global.rate_limits }
      : null,
    allow_all_models: row.allow_all_models,
    workspace_count: workspaceCount,
    secret_mappings: mappingsForResponse(row.secret_mappings, false),
    pricing_adjustments: row.pricing_adjustments,
  };
}

/**
 * A provider's status as a client should read it: past its expiry it is expired; with an inline
 * budget used up in its current period, exhausted. That one is read from the budget's counters,
 * never stored: the directory refuses a stored `exhausted` with 429 where the enforcer answers
 * 412 naming the budget, and a reset or a raised limit would need the row rewritten.
 */
export function effectiveStatus(row: ProviderEntity, budgetExhausted = false): string {
  if (row.status === 'active' && row.expires_at && row.expires_at.getTime() <= Date.now()) return 'expired';
  if (row.status === 'active' && budgetExhausted) return 'exhausted';
  return row.status;
}

export function toProviderResponse(
  row: ProviderEntity,
  integrationSlug: string | null,
  budgetExhausted = false,
) {
  return {
    object: 'provider' as const,
    id: row.id,
    slug: row.slug,
    name: row.name,
    note: row.note,
    /** The integration's slug, as `integration_id` takes it on create. */
    integration_id: integrationSlug,
    ai_provider_id: row.ai_provider_id,
    workspace_id: row.workspace_id,
    status: effectiveStatus(row, budgetExhausted),
    is_default: row.is_default,
    usage_limits: row.usage_limits,
    rate_limits: row.rate_limits,
    reset_usage: null,
    expires_at: iso(row.expires_at),
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    last_updated_at: row.updated_at.toISOString(),
  };
}

/** Virtual keys speak camelCase settings under `model_config`; secrets only masked. */
export function toVirtualKeyResponse(
  row: ProviderEntity,
  integrationSlug: string | null,
  secretSettings: Record<string, unknown>,
  budgetExhausted = false,
) {
  return {
    object: 'virtual-key' as const,
    id: row.id,
    slug: row.slug,
    name: row.name,
    note: row.note,
    provider: row.ai_provider_id,
    integration_id: integrationSlug,
    workspace_id: row.workspace_id,
    status: effectiveStatus(row, budgetExhausted),
    masked_key: row.key_mask,
    model_config: { ...toCamelSettings(row.configurations), ...maskSettings(secretSettings, true) },
    usage_limits: row.usage_limits,
    rate_limits: row.rate_limits,
    reset_usage: null,
    expires_at: iso(row.expires_at),
    secret_mappings: mappingsForResponse(row.secret_mappings, true),
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    last_updated_at: row.updated_at.toISOString(),
  };
}

export function toModelResponse(model: {
  slug: string;
  enabled: boolean;
  is_custom: boolean;
  is_finetune: boolean;
  base_model_slug: string | null;
  configurations: Record<string, unknown> | null;
  pricing_config: Record<string, unknown> | null;
}) {
  return {
    slug: model.slug,
    name: model.slug,
    enabled: model.enabled,
    is_custom: model.is_custom,
    is_finetune: model.is_finetune,
    base_model_slug: model.base_model_slug,
    configurations: model.configurations,
    pricing_config: model.pricing_config,
  };
}

export type StoredModel = Pick<
  IntegrationModelEntity,
  'slug' | 'enabled' | 'is_custom' | 'is_finetune' | 'base_model_slug' | 'configurations' | 'pricing_config'
>;
