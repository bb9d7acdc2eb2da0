export * from './policies.module';
export { PolicyEnforcer, rateHeaders } from './policy-enforcer';
export type {
  ActualUsage,
  EnforcementContext,
  InlineLimits,
  InlineRateLimit,
  InlineUsageLimit,
  Reservation,
} from './policy-enforcer';
export { BudgetResetJob } from './budget-reset.job';
export { BudgetAlerts } from './alerts/budget-alerts';
export { catalogCost } from './catalog-cost';
export { PolicyErrors } from './policies.errors';
export type { PoliciesSettings } from './policies.settings';
