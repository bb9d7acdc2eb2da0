import type { PeriodicReset } from './policy.types';
import { BudgetType, toUnits } from './policy.types';
import { resetRuleOf } from './periods';

/** One budget declared inline on an API key, workspace or provider, as its counter row is keyed. */
export interface InlineBudgetKey {
  /** `inline:<kind>:<id>:<type>:<rule>`: the counter row's `policy_key`. */
  policyKey: string;
  /** `<kind>:<id>`: the counter row's `value_key`. */
  valueKey: string;
  type: BudgetType;
  limitUnits: number;
}

interface DeclaredLimit {
  credit_limit?: unknown;
  type?: unknown;
  periodic_reset?: unknown;
  periodic_reset_days?: unknown;
}

/** The counter row's `policy_key` of an inline budget; the enforcer keys its rows with it too. */
export function inlineBudgetPolicyKey(
  kind: string,
  id: string,
  type: BudgetType,
  rule: string | null,
): string {
  return `inline:${kind}:${id}:${type}:${rule ?? 'none'}`;
}

/**
 * The budgets an owner's `usage_limits` (one object or a list) declare, keyed as the enforcer
 * keys their counter rows: one per type and reset rule, the lowest credit limit governing when
 * two share both. Limits without a credit limit declare no budget.
 */
export function inlineBudgetKeys(kind: string, id: string, usageLimits: unknown): InlineBudgetKey[] {
  if (!usageLimits || typeof usageLimits !== 'object') return [];
  const declared = (Array.isArray(usageLimits) ? usageLimits : [usageLimits]) as DeclaredLimit[];
  const byKey = new Map<string, InlineBudgetKey>();
  for (const limit of declared) {
    if (!limit || typeof limit.credit_limit !== 'number' || !Number.isFinite(limit.credit_limit)) continue;
    const type: BudgetType = limit.type === 'tokens' ? 'tokens' : 'cost';
    const rule = resetRuleOf(
      (limit.periodic_reset as PeriodicReset | null | undefined) ?? null,
      (limit.periodic_reset_days as number | null | undefined) ?? null,
    );
    const policyKey = inlineBudgetPolicyKey(kind, id, type, rule);
    const limitUnits = toUnits(type, limit.credit_limit);
    const existing = byKey.get(policyKey);
    if (existing && existing.limitUnits <= limitUnits) continue;
    byKey.set(policyKey, { policyKey, valueKey: `${kind}:${id}`, type, limitUnits });
  }
  return [...byKey.values()];
}
