import type { RateLimitPolicyEntity } from './entities/rate-limit-policy.entity';
import type { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import type { UsageLimitPolicyEntity } from './entities/usage-limit-policy.entity';

/** Decimal columns come back as strings from PostgreSQL and numbers from SQLite. */
export function decimal(value: string | number): number;
export function decimal(value: string | number | null): number | null;
export function decimal(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function toRateLimitPolicyResponse(policy: RateLimitPolicyEntity) {
  return {
    id: policy.id,
    name: policy.name,
    conditions: policy.conditions,
    group_by: policy.group_by,
    type: policy.type,
    unit: policy.unit,
    value: decimal(policy.value),
    status: policy.status,
    workspace_id: policy.workspace_id,
    organisation_id: policy.organisation_id,
    created_at: policy.created_at.toISOString(),
    last_updated_at: policy.updated_at.toISOString(),
  };
}

export function toUsageLimitPolicyResponse(policy: UsageLimitPolicyEntity) {
  return {
    id: policy.id,
    name: policy.name,
    conditions: policy.conditions,
    group_by: policy.group_by,
    type: policy.type,
    credit_limit: decimal(policy.credit_limit),
    alert_threshold: decimal(policy.alert_threshold),
    periodic_reset: policy.periodic_reset,
    periodic_reset_days: policy.periodic_reset_days,
    next_usage_reset_at: iso(policy.next_usage_reset_at),
    last_reset_at: iso(policy.last_reset_at),
    status: policy.status,
    workspace_id: policy.workspace_id,
    organisation_id: policy.organisation_id,
    created_at: policy.created_at.toISOString(),
    last_updated_at: policy.updated_at.toISOString(),
  };
}

/** What an entity's group values say it is: the API key, workspace or user it stands for. */
export function entityKindOf(groupValues: Record<string, string>): { type: string; id: string }[] {
  const kinds: { type: string; id: string }[] = [];
  for (const [key, value] of Object.entries(groupValues)) {
    if (key === 'api_key') kinds.push({ type: 'api_key', id: value });
    else if (key === 'workspace_id') kinds.push({ type: 'workspace', id: value });
    else if (key === 'organisation_id') kinds.push({ type: 'organisation', id: value });
    else if (key === 'metadata._user' || key === 'metadata.user_id') kinds.push({ type: 'user', id: value });
    else kinds.push({ type: 'metadata', id: value });
  }
  return kinds;
}

/** `currentUsage` is the live figure when the counters know it, else the persisted one. */
export function toPolicyEntityResponse(
  counter: UsageLimitCounterEntity,
  currentUsage: number,
  creditLimit: number,
) {
  return {
    object: 'policy_usage_limits_entity' as const,
    id: counter.id,
    value_key: counter.value_key,
    entities: entityKindOf(counter.group_values),
    current_usage: currentUsage,
    status: currentUsage >= creditLimit ? ('exhausted' as const) : ('active' as const),
    is_threshold_alerts_sent: counter.threshold_alert_sent,
    is_exhausted_alerts_sent: counter.exhausted_alert_sent,
    next_usage_reset_at: iso(counter.next_reset_at),
    last_reset_at: iso(counter.last_reset_at),
    created_at: counter.created_at.toISOString(),
    last_updated_at: counter.updated_at.toISOString(),
  };
}
