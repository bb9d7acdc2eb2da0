import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppError } from '@switchboard/common';
import { BudgetAlerts } from './alerts/budget-alerts';
import { CounterLedger, LedgerEntry } from './counter-ledger';
import {
  BudgetCharge,
  COUNTER_STORE,
  CounterStore,
  RateCharge,
  ReserveResult,
  SLOTS_PER_WINDOW,
} from './counters/counter-store';
import { PolicyErrors, policyLabel } from './policies.errors';
import { POLICIES_SETTINGS, PoliciesSettings } from './policies.settings';
import { MatchContext } from './policy-matching';
import { CompiledBudgetPolicy, PolicyRegistry } from './policy-registry';
import {
  BudgetType,
  PeriodicReset,
  RateLimitType,
  RateLimitUnit,
  WINDOW_MS,
  fromUnits,
  toUnits,
} from './policy.types';
import { inlineBudgetPolicyKey } from './inline-budgets';
import { ResetRule, firstBoundary, resetRuleOf } from './periods';
import { UsageRecorder } from './usage-recorder';

/** A rate limit declared on an API key, workspace or provider (RateLimitDto in libs/common). */
export interface InlineRateLimit {
  type: RateLimitType;
  unit: RateLimitUnit;
  value: number;
}

/** A budget declared on an API key, workspace or provider (UsageLimitsDto in libs/common). */
export interface InlineUsageLimit {
  credit_limit?: number | null;
  type?: BudgetType;
  alert_threshold?: number | null;
  periodic_reset?: PeriodicReset | null;
  periodic_reset_days?: number | null;
  next_usage_reset_at?: string | null;
}

/**
 * Limits carried by something the request uses, applied as extra policies. The group is the
 * thing itself: an API key's limits count that key's requests, a provider's count everything
 * sent through it.
 */
export interface InlineLimits {
  kind: 'api_key' | 'workspace' | 'provider';
  id: string;
  /** Shown in errors and alerts, e.g. the key or provider name. */
  name?: string | null;
  /** The workspace whose admins and managers get alerts (the key's, the provider's). */
  workspaceId?: string | null;
  rateLimits?: readonly InlineRateLimit[] | null;
  usageLimits?: InlineUsageLimit | readonly InlineUsageLimit[] | null;
  /** Extra alert addresses (an API key's `alert_emails`). */
  alertEmails?: readonly string[] | null;
}

export interface EnforcementContext extends MatchContext {
  inline?: readonly InlineLimits[];
  /**
   * False checks only `inline`: a routed request's stored provider, chosen by the routing engine
   * after the request's policies were already checked (and counted) once.
   */
  policies?: boolean;
  /**
   * What the call may use at most, reserved until settlement: tokens (prompt + max output) for
   * token limits and token budgets, dollars for cost budgets. Without it a token limit or budget
   * admits while any room is left, and concurrent calls can together pass the limit by what they
   * use; with an upper bound they never do.
   */
  estimate?: { tokens?: number; cost?: number };
}

export interface Reservation {
  readonly id: string;
  /** Rate-limit headers for the response (empty when no rate limit applies). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface ActualUsage {
  /** Tokens the call used (prompt + completion). */
  tokens?: number | null;
  /** Its cost in dollars, from the catalog (null when unknown: cost budgets then count nothing). */
  cost?: number | null;
}

interface RateHold {
  key: string;
  slotMs: number;
  type: RateLimitType;
  amount: number;
}

interface BudgetHold {
  key: string;
  type: BudgetType;
  amount: number;
  seed: number;
  entry: LedgerEntry;
  limitUnits: number;
  thresholdUnits: number | null;
  organisationId: string;
  workspaceId: string | null;
  label: string;
  resetsAt: Date | null;
  alertEmails: readonly string[];
}

class HeldReservation implements Reservation {
  open = true;
  constructor(
    readonly id: string,
    readonly headers: Record<string, string>,
    readonly now: number,
    readonly rates: RateHold[],
    readonly budgets: BudgetHold[],
  ) {}
}

interface RateMeta {
  label: string;
  type: RateLimitType;
  unit: RateLimitUnit;
  limit: number;
  valueKey: string;
}

interface BudgetMeta {
  label: string;
  type: BudgetType;
  valueKey: string;
  resetsAt: Date | null;
}

interface CompiledInline {
  rates: { key: string; slotMs: number; type: RateLimitType; unit: RateLimitUnit; limit: number }[];
  budgets: {
    policyKey: string;
    type: BudgetType;
    limitUnits: number;
    thresholdUnits: number | null;
    resetRule: ResetRule;
    nextResetAt: Date | null;
  }[];
}

/** A budget's counter row could not be read or created: refused, never let through unchecked. */
function unavailable(error: Error): never {
  throw PolicyErrors.storeUnavailable(`budget counters: ${error.message}`);
}

const NO_RESERVATION: Reservation = Object.freeze({ id: 'none', headers: Object.freeze({}) });

/**
 * The request path of the policies area. `check` before the upstream call, then exactly one of
 * `settle` (the call ran: count what it used) or `release` (it did not: give everything back).
 * Warm checks read policies and counter rows from memory and make one counter-store call (a
 * synchronous Map update in-process, one Lua script round trip with Redis).
 */
@Injectable()
export class PolicyEnforcer {
  private readonly logger = new Logger(PolicyEnforcer.name);
  private readonly inlineCache = new WeakMap<InlineLimits, CompiledInline>();

  constructor(
    private readonly registry: PolicyRegistry,
    private readonly ledger: CounterLedger,
    @Inject(COUNTER_STORE) private readonly store: CounterStore,
    private readonly recorder: UsageRecorder,
    private readonly alerts: BudgetAlerts,
    @Inject(POLICIES_SETTINGS) private readonly settings: PoliciesSettings,
  ) {}

  /**
   * Whether any policy or inline limit could hold a request: when none can, `check` admits it
   * with no reservation and no headers, so a caller on the request path may skip it (and its
   * promise) altogether. Reads the in-memory registry only.
   */
  mayApply(
    organisationId: string,
    workspaceId: string | null,
    inline: readonly InlineLimits[] | undefined,
  ): boolean {
    return (
      (inline !== undefined && inline.length > 0) || this.registry.hasPolicies(organisationId, workspaceId)
    );
  }

  /**
   * Reserves the request against every policy that applies. Resolves to a Reservation whose
   * headers the response should carry, or rejects with an AppError: 429 with Retry-After when
   * a rate limit is reached, 412 when a budget is exhausted (or cannot cover the estimate).
   */
  async check(context: EnforcementContext): Promise<Reservation> {
    if (!this.mayApply(context.organisationId, context.workspaceId, context.inline)) return NO_RESERVATION;
    const tokenEstimate = Math.max(0, Math.ceil(context.estimate?.tokens ?? 0));
    const costEstimate = Math.max(0, Math.ceil(toUnits('cost', context.estimate?.cost ?? 0)));
    const rates: RateCharge[] = [];
    const rateMeta: RateMeta[] = [];
    const holds: RateHold[] = [];
    const budgets: BudgetCharge[] = [];
    const budgetMeta: BudgetMeta[] = [];
    const budgetHolds: BudgetHold[] = [];

    const buckets =
      context.policies === false
        ? []
        : [
            this.registry.workspaceBucket(context.organisationId, context.workspaceId),
            this.registry.organisationBucket(context.organisationId),
          ];
    for (const bucket of buckets) {
      for (const policy of bucket.rates) {
        if (!policy.matcher.matches(context)) continue;
        const valueKey = policy.matcher.valueKey(context);
        if (valueKey === null) continue;
        const amount = policy.type === 'requests' ? 1 : tokenEstimate;
        const key = policy.keyPrefix + valueKey;
        rates.push({ key, slotMs: policy.slotMs, limit: policy.limit, amount });
        holds.push({ key, slotMs: policy.slotMs, type: policy.type, amount });
        rateMeta.push({
          label: policyLabel('Rate limit policy', policy.id, policy.name),
          type: policy.type,
          unit: policy.unit,
          limit: policy.limit,
          valueKey,
        });
      }
      for (const policy of bucket.budgets) {
        if (!policy.matcher.matches(context)) continue;
        const valueKey = policy.matcher.valueKey(context);
        if (valueKey === null) continue;
        const entry =
          this.ledger.get(policy.id, valueKey) ??
          (await this.obtainPolicyCounter(policy, valueKey, context).catch(unavailable));
        const current = await this.current(entry);
        const amount = policy.type === 'cost' ? costEstimate : tokenEstimate;
        budgets.push({ key: current.storeKey, limit: policy.limitUnits, amount, seed: current.seedUnits });
        const resetsAt = current.nextResetAt === null ? null : new Date(current.nextResetAt);
        const label = policyLabel('Usage limit policy', policy.id, policy.name);
        budgetMeta.push({ label, type: policy.type, valueKey, resetsAt });
        budgetHolds.push({
          key: current.storeKey,
          type: policy.type,
          amount,
          seed: current.seedUnits,
          entry: current,
          limitUnits: policy.limitUnits,
          thresholdUnits: policy.thresholdUnits,
          organisationId: policy.organisationId,
          // An organisation-wide budget alerts the organisation's admins, not one workspace's.
          workspaceId: policy.workspaceId,
          label,
          resetsAt,
          alertEmails: [],
        });
      }
    }

    for (const source of context.inline ?? []) {
      const compiled = this.compileInline(source);
      const owner = source.kind.replace('_', ' ');
      const valueKey = `${source.kind}:${source.id}`;
      for (const rate of compiled.rates) {
        const amount = rate.type === 'requests' ? 1 : tokenEstimate;
        rates.push({ key: rate.key, slotMs: rate.slotMs, limit: rate.limit, amount });
        holds.push({ key: rate.key, slotMs: rate.slotMs, type: rate.type, amount });
        rateMeta.push({
          label: policyLabel(`The rate limit of ${owner}`, source.id, source.name),
          type: rate.type,
          unit: rate.unit,
          limit: rate.limit,
          valueKey,
        });
      }
      for (const budget of compiled.budgets) {
        const entry =
          this.ledger.get(budget.policyKey, valueKey) ??
          (await this.ledger
            .obtain({
              organisationId: context.organisationId,
              workspaceId: source.workspaceId ?? context.workspaceId,
              policyKey: budget.policyKey,
              policyId: null,
              valueKey,
              groupValues: { [source.kind]: source.id },
              type: budget.type,
              resetRule: budget.resetRule,
              nextResetAt: budget.nextResetAt ?? firstBoundary(budget.resetRule, new Date()),
              creditLimit: fromUnits(budget.type, budget.limitUnits),
              alertThreshold:
                budget.thresholdUnits === null ? null : fromUnits(budget.type, budget.thresholdUnits),
            })
            .catch(unavailable));
        if (entry.limitUnits !== budget.limitUnits || entry.thresholdUnits !== budget.thresholdUnits)
          await this.ledger
            .applyInlineLimits(entry, budget.type, budget.limitUnits, budget.thresholdUnits)
            .catch(unavailable);
        const current = await this.current(entry);
        const amount = budget.type === 'cost' ? costEstimate : tokenEstimate;
        budgets.push({ key: current.storeKey, limit: budget.limitUnits, amount, seed: current.seedUnits });
        const resetsAt = current.nextResetAt === null ? null : new Date(current.nextResetAt);
        const label = policyLabel(`The budget of ${owner}`, source.id, source.name);
        budgetMeta.push({
          label,
          type: budget.type,
          valueKey,
          resetsAt,
        });
        budgetHolds.push({
          key: current.storeKey,
          type: budget.type,
          amount,
          seed: current.seedUnits,
          entry: current,
          limitUnits: budget.limitUnits,
          thresholdUnits: budget.thresholdUnits,
          organisationId: context.organisationId,
          workspaceId: source.workspaceId ?? context.workspaceId,
          label,
          resetsAt,
          alertEmails: source.alertEmails ?? [],
        });
      }
    }

    if (rates.length === 0 && budgets.length === 0) return NO_RESERVATION;

    const id = randomUUID();
    let result: ReserveResult;
    try {
      result = await this.store.reserve({ id, ttlMs: this.settings.reservationTtlMs, rates, budgets });
    } catch (error) {
      this.logger.error(`Counter store failed: ${(error as Error).message}`);
      throw PolicyErrors.storeUnavailable((error as Error).message);
    }
    if (!result.admitted) throw this.refusal(result, rateMeta, budgets, budgetMeta);

    const headers = rateHeaders(
      rateMeta.map((meta, index) => ({
        type: meta.type,
        limit: meta.limit,
        used: result.rates[index].used,
        resetMs: result.rates[index].resetMs,
      })),
    );
    return new HeldReservation(id, headers, result.now, holds, budgetHolds);
  }

  /**
   * Counts what the call used: token limits get the actual tokens in place of the estimate,
   * budgets the actual tokens or cost. Never rejects; the response need not wait for it.
   */
  async settle(reservation: Reservation, usage: ActualUsage): Promise<void> {
    if (!(reservation instanceof HeldReservation) || !reservation.open) return;
    reservation.open = false;
    const tokens = Math.max(0, Math.round(Number.isFinite(usage.tokens) ? Number(usage.tokens) : 0));
    const cost =
      usage.cost !== null && usage.cost !== undefined && Number.isFinite(usage.cost) && usage.cost > 0
        ? toUnits('cost', usage.cost)
        : 0;
    const rates = [];
    for (const hold of reservation.rates) {
      if (hold.type !== 'tokens' || tokens === hold.amount) continue;
      rates.push({
        key: hold.key,
        slot: Math.floor(reservation.now / hold.slotMs),
        slotMs: hold.slotMs,
        delta: tokens - hold.amount,
      });
    }
    const budgets = reservation.budgets.map((hold) => ({
      key: hold.key,
      actual: hold.type === 'cost' ? cost : tokens,
      seed: hold.seed,
    }));
    if (rates.length === 0 && budgets.length === 0) return;
    // The database record first: the call happened, whatever becomes of the live counters.
    reservation.budgets.forEach((hold, index) =>
      this.recorder.record(
        hold.entry.rowId,
        hold.entry.epoch,
        hold.type,
        budgets[index].actual,
        hold.limitUnits,
      ),
    );
    try {
      const used = await this.store.settle({ id: reservation.id, rates, budgets });
      reservation.budgets.forEach((hold, index) => this.alertIfCrossed(hold, used[index]));
    } catch (error) {
      this.logger.error(`Could not settle reservation ${reservation.id}: ${(error as Error).message}`);
    }
  }

  /** Gives back everything the reservation took: the call was not made. Never rejects. */
  async release(reservation: Reservation): Promise<void> {
    if (!(reservation instanceof HeldReservation) || !reservation.open) return;
    reservation.open = false;
    try {
      await this.store.release({
        id: reservation.id,
        rates: reservation.rates.map((hold) => ({
          key: hold.key,
          slot: Math.floor(reservation.now / hold.slotMs),
          slotMs: hold.slotMs,
          amount: hold.amount,
        })),
        budgets: reservation.budgets.map((hold) => ({ key: hold.key })),
      });
    } catch (error) {
      this.logger.error(`Could not release reservation ${reservation.id}: ${(error as Error).message}`);
    }
  }

  private alertIfCrossed(hold: BudgetHold, used: number): void {
    const entry = hold.entry;
    const alert = (kind: 'threshold' | 'exhausted') =>
      this.alerts.raise({
        kind,
        rowId: entry.rowId,
        epoch: entry.epoch,
        organisationId: hold.organisationId,
        workspaceId: hold.workspaceId,
        label: hold.label,
        valueKey: entry.valueKey,
        type: hold.type,
        used: fromUnits(hold.type, used),
        limit: fromUnits(hold.type, hold.limitUnits),
        threshold: hold.thresholdUnits === null ? null : fromUnits(hold.type, hold.thresholdUnits),
        resetsAt: hold.resetsAt,
        extraEmails: hold.alertEmails,
      });
    if (hold.thresholdUnits !== null && used >= hold.thresholdUnits && !entry.thresholdSent) {
      entry.thresholdSent = true;
      alert('threshold');
    }
    if (used >= hold.limitUnits && !entry.exhaustedSent) {
      entry.exhaustedSent = true;
      alert('exhausted');
    }
  }

  private obtainPolicyCounter(
    policy: CompiledBudgetPolicy,
    valueKey: string,
    context: EnforcementContext,
  ): Promise<LedgerEntry> {
    return this.ledger.obtain({
      organisationId: policy.organisationId,
      workspaceId: policy.workspaceId,
      policyKey: policy.id,
      policyId: policy.id,
      valueKey,
      groupValues: policy.matcher.groupValues(context),
      type: policy.type,
      resetRule: policy.resetRule,
      nextResetAt: policy.nextResetAt,
    });
  }

  /** The entry, moved to its new period first if its boundary has passed. */
  private current(entry: LedgerEntry): LedgerEntry | Promise<LedgerEntry> {
    if (entry.nextResetAt !== null && entry.nextResetAt <= Date.now())
      return this.ledger.resetDue(entry).catch(unavailable);
    return entry;
  }

  private compileInline(source: InlineLimits): CompiledInline {
    const cached = this.inlineCache.get(source);
    if (cached) return cached;
    const owner = `inline:${source.kind}:${source.id}`;
    // Two limits on the same type and unit count the same thing: the lower one governs.
    const rateByKey = new Map<string, CompiledInline['rates'][number]>();
    for (const rate of source.rateLimits ?? []) {
      if (!(rate.value > 0)) continue;
      const key = `r|${owner}|${rate.type}|${rate.unit}|${source.kind}:${source.id}`;
      const existing = rateByKey.get(key);
      if (!existing || rate.value < existing.limit)
        rateByKey.set(key, {
          key,
          slotMs: WINDOW_MS[rate.unit] / SLOTS_PER_WINDOW,
          type: rate.type,
          unit: rate.unit,
          limit: rate.value,
        });
    }
    const usageLimits = source.usageLimits
      ? Array.isArray(source.usageLimits)
        ? (source.usageLimits as readonly InlineUsageLimit[])
        : [source.usageLimits as InlineUsageLimit]
      : [];
    const budgetByKey = new Map<string, CompiledInline['budgets'][number]>();
    for (const limit of usageLimits) {
      if (limit.credit_limit === null || limit.credit_limit === undefined) continue;
      const type = limit.type ?? 'cost';
      const resetRule = resetRuleOf(limit.periodic_reset, limit.periodic_reset_days);
      const policyKey = inlineBudgetPolicyKey(source.kind, source.id, type, resetRule);
      const limitUnits = toUnits(type, limit.credit_limit);
      const existing = budgetByKey.get(policyKey);
      if (existing && existing.limitUnits <= limitUnits) continue;
      const next = limit.next_usage_reset_at ? new Date(limit.next_usage_reset_at) : null;
      budgetByKey.set(policyKey, {
        policyKey,
        type,
        limitUnits,
        thresholdUnits:
          limit.alert_threshold === null || limit.alert_threshold === undefined
            ? null
            : toUnits(type, limit.alert_threshold),
        resetRule,
        nextResetAt: resetRule !== null && next && next.getTime() > Date.now() ? next : null,
      });
    }
    const compiled = { rates: [...rateByKey.values()], budgets: [...budgetByKey.values()] };
    this.inlineCache.set(source, compiled);
    return compiled;
  }

  private refusal(
    result: Extract<ReserveResult, { admitted: false }>,
    rateMeta: RateMeta[],
    budgets: BudgetCharge[],
    budgetMeta: BudgetMeta[],
  ): AppError {
    // An exhausted budget first: waiting does not help, so Retry-After would mislead.
    const budgetFailure = result.budgetFailures[0];
    if (budgetFailure) {
      const meta = budgetMeta[budgetFailure.index];
      const charge = budgets[budgetFailure.index];
      const show = (units: number) =>
        meta.type === 'cost' ? `$${Number(fromUnits('cost', units).toFixed(8))}` : `${units} tokens`;
      if (budgetFailure.used >= charge.limit) {
        return PolicyErrors.budgetExhausted(meta.label, {
          valueKey: meta.valueKey,
          used: show(budgetFailure.used),
          limit: show(charge.limit),
          resetsAt: meta.resetsAt,
        });
      }
      return PolicyErrors.budgetInsufficient(meta.label, {
        valueKey: meta.valueKey,
        remaining: show(Math.max(0, charge.limit - budgetFailure.used - budgetFailure.reserved)),
        limit: show(charge.limit),
        needed: show(charge.amount),
      });
    }
    const failures = result.rateFailures;
    const retryAfterMs = Math.max(...failures.map((failure) => failure.retryAfterMs));
    const first = failures[0];
    const meta = rateMeta[first.index];
    const headers = rateHeaders([
      { type: meta.type, limit: meta.limit, used: Math.max(first.used, meta.limit), resetMs: retryAfterMs },
    ]);
    return PolicyErrors.rateLimited(
      meta.label,
      { type: meta.type, unit: meta.unit, limit: meta.limit, valueKey: meta.valueKey },
      retryAfterMs,
      headers,
    );
  }
}

/**
 * `x-gateway-ratelimit-{limit,remaining,reset}-{requests,tokens}` for the tightest request and
 * token limit (the least remaining). Our prefix, because provider responses carry their own
 * `x-ratelimit-*` headers. `reset` is in seconds: when remaining next grows.
 */
export function rateHeaders(
  rates: { type: RateLimitType; limit: number; used: number; resetMs: number }[],
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const type of ['requests', 'tokens'] as const) {
    let tightest: (typeof rates)[number] | null = null;
    for (const rate of rates) {
      if (rate.type !== type) continue;
      if (!tightest || rate.limit - rate.used < tightest.limit - tightest.used) tightest = rate;
    }
    if (!tightest) continue;
    headers[`x-gateway-ratelimit-limit-${type}`] = String(tightest.limit);
    headers[`x-gateway-ratelimit-remaining-${type}`] = String(Math.max(0, tightest.limit - tightest.used));
    headers[`x-gateway-ratelimit-reset-${type}`] = String(Math.ceil(tightest.resetMs / 1000));
  }
  return headers;
}
