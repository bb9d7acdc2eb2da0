import {
  BudgetOutcome,
  CounterStore,
  RateOutcome,
  ReleaseInput,
  ReserveInput,
  ReserveResult,
  SLOTS_PER_WINDOW,
  SettleInput,
  fits,
  retryAfterMs,
} from './counter-store';

/** Slots oldest first; `total` is their sum. At most SLOTS_PER_WINDOW + 1 entries. */
interface RateWindow {
  slots: number[];
  counts: number[];
  total: number;
  slotMs: number;
}

interface Budget {
  used: number;
  reserved: number;
  reservations: Map<string, { amount: number; expiresAt: number }>;
}

/**
 * The in-process store: exact within one process because a reservation runs synchronously from
 * the first read to the last write, so no other request interleaves (no lost update). The
 * clock is injectable for tests of the sliding window.
 */
export class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory' as const;
  private readonly windows = new Map<string, RateWindow>();
  private readonly budgets = new Map<string, Budget>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: () => number = Date.now) {
    // Idle windows are dropped so a stream of one-off groups does not grow the map forever.
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  reserve(input: ReserveInput): ReserveResult {
    const now = this.clock();
    const windows: RateWindow[] = [];
    let rateFailures: { index: number; used: number; retryAfterMs: number }[] | null = null;
    for (let index = 0; index < input.rates.length; index++) {
      const charge = input.rates[index];
      const window = this.window(charge.key, charge.slotMs, now);
      windows.push(window);
      if (!fits(window.total, charge.amount, charge.limit)) {
        (rateFailures ??= []).push({
          index,
          used: window.total,
          retryAfterMs: retryAfterMs(
            window.slots,
            window.counts,
            window.total,
            charge.amount,
            charge.limit,
            charge.slotMs,
            now,
          ),
        });
      }
    }
    const budgets: Budget[] = [];
    let budgetFailures: { index: number; used: number; reserved: number }[] | null = null;
    for (let index = 0; index < input.budgets.length; index++) {
      const charge = input.budgets[index];
      const budget = this.budget(charge.key, charge.seed);
      if (!fits(budget.used + budget.reserved, charge.amount, charge.limit)) this.expire(budget, now);
      budgets.push(budget);
      if (!fits(budget.used + budget.reserved, charge.amount, charge.limit)) {
        (budgetFailures ??= []).push({ index, used: budget.used, reserved: budget.reserved });
      }
    }
    if (rateFailures || budgetFailures) {
      return { admitted: false, now, rateFailures: rateFailures ?? [], budgetFailures: budgetFailures ?? [] };
    }

    const current = new Array<RateOutcome>(windows.length);
    for (let index = 0; index < windows.length; index++) {
      const window = windows[index];
      const amount = input.rates[index].amount;
      if (amount !== 0) this.add(window, Math.floor(now / window.slotMs), amount);
      const oldest = window.slots.length > 0 ? window.slots[0] : Math.floor(now / window.slotMs);
      current[index] = {
        used: window.total,
        resetMs: Math.max(0, (oldest + SLOTS_PER_WINDOW + 1) * window.slotMs - now),
      };
    }
    const outcomes = new Array<BudgetOutcome>(budgets.length);
    for (let index = 0; index < budgets.length; index++) {
      const budget = budgets[index];
      const amount = input.budgets[index].amount;
      if (amount > 0) {
        budget.reserved += amount;
        budget.reservations.set(input.id, { amount, expiresAt: now + input.ttlMs });
      }
      outcomes[index] = { used: budget.used, reserved: budget.reserved };
    }
    return { admitted: true, now, rates: current, budgets: outcomes };
  }

  settle(input: SettleInput): number[] {
    for (const rate of input.rates) {
      if (rate.delta === 0) continue;
      const window = this.windows.get(rate.key);
      if (window) this.adjust(window, rate.slot, rate.delta, this.clock());
    }
    return input.budgets.map((charge) => {
      const budget = this.budget(charge.key, charge.seed);
      this.drop(budget, input.id);
      budget.used += charge.actual;
      return budget.used;
    });
  }

  release(input: ReleaseInput): void {
    for (const rate of input.rates) {
      const window = this.windows.get(rate.key);
      if (window && rate.amount !== 0) this.adjust(window, rate.slot, -rate.amount, this.clock());
    }
    for (const charge of input.budgets) {
      const budget = this.budgets.get(charge.key);
      if (budget) this.drop(budget, input.id);
    }
  }

  readBudgets(keys: readonly string[]): (number | null)[] {
    return keys.map((key) => this.budgets.get(key)?.used ?? null);
  }

  dropBudgets(keys: readonly string[]): void {
    for (const key of keys) this.budgets.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private window(key: string, slotMs: number, now: number): RateWindow {
    let window = this.windows.get(key);
    if (!window || window.slotMs !== slotMs) {
      window = { slots: [], counts: [], total: 0, slotMs };
      this.windows.set(key, window);
      return window;
    }
    const oldestCounted = Math.floor(now / slotMs) - SLOTS_PER_WINDOW;
    while (window.slots.length > 0 && window.slots[0] < oldestCounted) {
      window.total -= window.counts[0];
      window.slots.shift();
      window.counts.shift();
    }
    if (window.slots.length === 0) window.total = 0;
    return window;
  }

  private add(window: RateWindow, slot: number, amount: number): void {
    const last = window.slots.length - 1;
    if (last >= 0 && window.slots[last] === slot) window.counts[last] += amount;
    else {
      window.slots.push(slot);
      window.counts.push(amount);
    }
    window.total += amount;
  }

  /** Changes a slot still in the window; a slot that already left needs no correction. */
  private adjust(window: RateWindow, slot: number, delta: number, now: number): void {
    if (slot < Math.floor(now / window.slotMs) - SLOTS_PER_WINDOW) return;
    let index = window.slots.length - 1;
    for (; index >= 0; index--) {
      if (window.slots[index] === slot) {
        const next = Math.max(0, window.counts[index] + delta);
        window.total += next - window.counts[index];
        window.counts[index] = next;
        return;
      }
      if (window.slots[index] < slot) break;
    }
    // A reservation that counted nothing (a token limit without an estimate) has no slot yet.
    if (delta > 0) {
      window.slots.splice(index + 1, 0, slot);
      window.counts.splice(index + 1, 0, delta);
      window.total += delta;
    }
  }

  private budget(key: string, seed: number): Budget {
    let budget = this.budgets.get(key);
    if (!budget) {
      budget = { used: seed, reserved: 0, reservations: new Map() };
      this.budgets.set(key, budget);
    }
    return budget;
  }

  private drop(budget: Budget, id: string): void {
    const reservation = budget.reservations.get(id);
    if (!reservation) return;
    budget.reservations.delete(id);
    budget.reserved -= reservation.amount;
  }

  private expire(budget: Budget, now: number): void {
    for (const [id, reservation] of budget.reservations) {
      if (reservation.expiresAt <= now) {
        budget.reservations.delete(id);
        budget.reserved -= reservation.amount;
      }
    }
  }

  private sweep(): void {
    const now = this.clock();
    for (const [key, window] of this.windows) {
      const newest = window.slots[window.slots.length - 1];
      if (newest === undefined || newest < Math.floor(now / window.slotMs) - SLOTS_PER_WINDOW)
        this.windows.delete(key);
    }
  }
}
