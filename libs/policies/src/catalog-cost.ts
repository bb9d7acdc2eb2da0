import { TokenUsage, computeCost, getModelPricing } from '@switchboard/integrations';

/**
 * Dollars a call costs at the catalog's prices, or null when the model has no price. The gateway
 * passes this to `PolicyEnforcer.settle` as `cost`, and may pass the same for the worst case
 * (prompt tokens + max output tokens) as the `estimate` of a cost budget.
 */
export function catalogCost(provider: string, model: string, usage: TokenUsage): number | null {
  try {
    return computeCost(getModelPricing(provider, model), usage)?.amount ?? null;
  } catch {
    return null;
  }
}
