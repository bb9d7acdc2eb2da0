/** Shapes shared by the policy store, the registry and the enforcer. */
export type PolicyStatus = 'active' | 'archived';
export type RateLimitType = 'requests' | 'tokens';
export type RateLimitUnit = 'rpm' | 'rph' | 'rpd';
export type BudgetType = 'cost' | 'tokens';
export type EntityStatus = 'active' | 'exhausted';
export type PeriodicReset = 'weekly' | 'monthly';

export interface PolicyCondition {
  key: string;
  value: string;
}

export interface PolicyGroupBy {
  key: string;
}

export const RATE_LIMIT_TYPES: readonly RateLimitType[] = ['requests', 'tokens'];
export const RATE_LIMIT_UNITS: readonly RateLimitUnit[] = ['rpm', 'rph', 'rpd'];
export const BUDGET_TYPES: readonly BudgetType[] = ['cost', 'tokens'];
export const PERIODIC_RESETS: readonly PeriodicReset[] = ['weekly', 'monthly'];

/** The length of each rate-limit unit's window. */
export const WINDOW_MS: Record<RateLimitUnit, number> = {
  rpm: 60_000,
  rph: 3_600_000,
  rpd: 86_400_000,
};

/**
 * Counters hold integers: tokens as they are, dollars in units of 1e-8 (so 90 million dollars
 * still fit a double exactly). Sums of floats drift (0.01 × 50 > 0.5), which would refuse the
 * fiftieth request of a $0.50 budget; integer units compare exactly.
 */
export const BUDGET_SCALE: Record<BudgetType, number> = { cost: 1e8, tokens: 1 };

export function toUnits(type: BudgetType, amount: number): number {
  return Math.round(amount * BUDGET_SCALE[type]);
}

export function fromUnits(type: BudgetType, units: number): number {
  return units / BUDGET_SCALE[type];
}
