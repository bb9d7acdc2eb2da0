/**
 * Whether budgets declared inline (`usage_limits`) are used up, asked when API keys and providers
 * are read so their `status` says `exhausted`. The policies module counts those budgets and
 * provides this; the libs that read keys and providers cannot import it (it imports them), so the
 * token lives here. Without it (an app without the policies module) nothing is ever exhausted.
 */
export const INLINE_USAGE_STATUS = Symbol('INLINE_USAGE_STATUS');

export type InlineBudgetKind = 'api_key' | 'provider';

export interface InlineBudgetOwner {
  id: string;
  /** The owner's `usage_limits` as stored now: a raised limit counts at once, before any request. */
  usageLimits: unknown;
}

export interface InlineUsageStatus {
  /** The ids among `owners` with an inline budget used up in its current period. */
  exhausted(kind: InlineBudgetKind, owners: readonly InlineBudgetOwner[]): Promise<ReadonlySet<string>>;
  /** Starts a new period now for every inline budget of the owner: usage 0, alerts re-armed. */
  reset(kind: InlineBudgetKind, ownerId: string): Promise<void>;
}
