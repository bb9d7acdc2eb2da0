import type { RateLimitUnit } from '../policy.types';

/**
 * Live counters for rate limits and budgets, shared by every request of a process (in-process
 * store) or of every replica (Redis store). A reservation is all or nothing: either every charge
 * fits and all are counted, or none is.
 *
 * Rate limits use a sliding window of 60 slots per unit (1 s slots for rpm, 1 min for rph,
 * 24 min for rpd). A request is counted in the current slot, and the window sums the slots that
 * overlap the last unit, the oldest partly-expired slot included. So no span of one unit ever
 * holds more than the limit, a burst at a boundary cannot double it (as a fixed window would
 * allow), and memory stays at most 61 numbers per group, unlike a log of every request.
 *
 * Budgets hold `used` (settled) and `reserved` (in flight) in integer units; a reservation
 * expires after a TTL so a replica that dies mid-request does not hold budget forever.
 */
export const SLOTS_PER_WINDOW = 60;

export interface RateCharge {
  key: string;
  /** Slot length: the unit's window divided by SLOTS_PER_WINDOW. */
  slotMs: number;
  limit: number;
  /** 1 for a request limit; the estimated tokens (possibly 0) for a token limit. */
  amount: number;
}

export interface BudgetCharge {
  key: string;
  limit: number;
  /** The estimate reserved now, replaced by the actual usage at settlement. */
  amount: number;
  /** Usage persisted in the database, used when the counter does not exist yet. */
  seed: number;
}

export interface ReserveInput {
  id: string;
  ttlMs: number;
  rates: readonly RateCharge[];
  budgets: readonly BudgetCharge[];
}

export interface RateOutcome {
  /** The window's count after this reservation. */
  used: number;
  /** Milliseconds until the oldest counted slot leaves the window (capacity grows). */
  resetMs: number;
}

export interface BudgetOutcome {
  used: number;
  reserved: number;
}

export type ReserveResult =
  | {
      admitted: true;
      /** The store's clock at the reservation: settlement finds the slot from it. */
      now: number;
      rates: RateOutcome[];
      budgets: BudgetOutcome[];
    }
  | {
      admitted: false;
      now: number;
      rateFailures: { index: number; used: number; retryAfterMs: number }[];
      budgetFailures: { index: number; used: number; reserved: number }[];
    };

export interface SettleInput {
  id: string;
  /** For token limits: actual − estimate, added to the slot of the reservation while it is counted. */
  rates: readonly { key: string; slot: number; slotMs: number; delta: number }[];
  budgets: readonly { key: string; actual: number; seed: number }[];
}

export interface ReleaseInput {
  id: string;
  rates: readonly { key: string; slot: number; slotMs: number; amount: number }[];
  budgets: readonly { key: string }[];
}

export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  reserve(input: ReserveInput): ReserveResult | Promise<ReserveResult>;
  /** Returns each budget's settled usage afterwards. */
  settle(input: SettleInput): number[] | Promise<number[]>;
  release(input: ReleaseInput): void | Promise<void>;
  /** Current settled usage of budgets, or null for a counter that does not exist. */
  readBudgets(keys: readonly string[]): (number | null)[] | Promise<(number | null)[]>;
  /** Forgets budget counters (after a reset, when their epoch is over). */
  dropBudgets(keys: readonly string[]): void | Promise<void>;
  close(): Promise<void>;
}

export const COUNTER_STORE = Symbol('COUNTER_STORE');

export function slotMsOf(unit: RateLimitUnit, windowMs: Record<RateLimitUnit, number>): number {
  return windowMs[unit] / SLOTS_PER_WINDOW;
}

/** Whether `amount` more fits under `limit` with `used` taken; a zero amount needs room left. */
export function fits(used: number, amount: number, limit: number): boolean {
  return amount > 0 ? used + amount <= limit : used < limit;
}

/**
 * When enough of the oldest slots will have left the window for `amount` to fit: slot i stops
 * being counted at (i + SLOTS_PER_WINDOW + 1) × slotMs. An amount above the limit never fits;
 * the answer is then a whole window.
 */
export function retryAfterMs(
  slots: readonly number[],
  counts: readonly number[],
  total: number,
  amount: number,
  limit: number,
  slotMs: number,
  now: number,
): number {
  if (amount > limit) return slotMs * SLOTS_PER_WINDOW;
  let freed = 0;
  for (let index = 0; index < slots.length; index++) {
    freed += counts[index];
    if (fits(total - freed, amount, limit)) {
      return Math.max(1, (slots[index] + SLOTS_PER_WINDOW + 1) * slotMs - now);
    }
  }
  return slotMs * SLOTS_PER_WINDOW;
}
