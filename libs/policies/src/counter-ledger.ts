import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { InvalidationBus } from '@switchboard/common';
import { COUNTER_STORE, CounterStore } from './counters/counter-store';
import { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import { decimal } from './policies.mapper';
import { BudgetType, fromUnits, toUnits } from './policy.types';
import { ResetRule, nextBoundaryAfter } from './periods';
import { COUNTERS_TOPIC } from './policy-registry';

/** What a budget counter row is made from, the first time a group spends. */
export interface CounterSpec {
  organisationId: string;
  workspaceId: string | null;
  policyKey: string;
  policyId: string | null;
  valueKey: string;
  groupValues: Record<string, string>;
  type: BudgetType;
  resetRule: ResetRule;
  nextResetAt: Date | null;
  /** Inline budgets only: the limits in force, to notice a change later. */
  creditLimit?: number | null;
  alertThreshold?: number | null;
}

/** The cached state of one counter row: enough to build its live counter key and seed it. */
export interface LedgerEntry {
  rowId: string;
  policyKey: string;
  valueKey: string;
  workspaceId: string | null;
  epoch: number;
  /** Persisted usage when loaded, in counter units: the seed of a counter that does not exist yet. */
  seedUnits: number;
  nextResetAt: number | null;
  thresholdSent: boolean;
  exhaustedSent: boolean;
  /** Inline budgets: the limits last applied, in counter units. */
  limitUnits: number | null;
  thresholdUnits: number | null;
  storeKey: string;
  loadedAt: number;
}

export function budgetStoreKey(policyKey: string, epoch: number, valueKey: string): string {
  return `b|${policyKey}|${epoch}|${valueKey}`;
}

/** Entries older than this are re-read in the background, so the seed of a counter stays recent. */
const REFRESH_AFTER_MS = 60_000;
const MAX_ENTRIES = 100_000;

/**
 * Budget counter rows, cached: the warm path is one Map read. A miss (the first request of a
 * group, or after a reset anywhere) reads or creates the row once, shared by concurrent requests.
 */
@Injectable()
export class CounterLedger implements OnModuleInit {
  private readonly logger = new Logger(CounterLedger.name);
  private readonly entries = new Map<string, LedgerEntry>();
  private readonly pending = new Map<string, Promise<LedgerEntry>>();
  private generation = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(COUNTER_STORE) private readonly store: CounterStore,
    private readonly bus: InvalidationBus,
  ) {}

  onModuleInit(): void {
    this.bus.on(COUNTERS_TOPIC, () => this.clear());
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
    this.pending.clear();
  }

  get(policyKey: string, valueKey: string): LedgerEntry | undefined {
    const entry = this.entries.get(`${policyKey}\u0000${valueKey}`);
    if (entry && Date.now() - entry.loadedAt > REFRESH_AFTER_MS) {
      entry.loadedAt = Date.now();
      void this.load(entry.policyKey, entry.valueKey, null).catch(() => undefined);
    }
    return entry;
  }

  /** The row of `spec`, created if the group never spent before. */
  obtain(spec: CounterSpec): Promise<LedgerEntry> {
    return this.load(spec.policyKey, spec.valueKey, spec);
  }

  private load(policyKey: string, valueKey: string, spec: CounterSpec | null): Promise<LedgerEntry> {
    const cacheKey = `${policyKey}\u0000${valueKey}`;
    const inFlight = this.pending.get(cacheKey);
    if (inFlight) return inFlight;
    const generation = this.generation;
    const promise = this.read(policyKey, valueKey, spec)
      .then((entry) => {
        if (generation === this.generation) {
          if (this.entries.size >= MAX_ENTRIES)
            this.entries.delete(this.entries.keys().next().value as string);
          this.entries.set(cacheKey, entry);
        }
        return entry;
      })
      .finally(() => this.pending.delete(cacheKey));
    this.pending.set(cacheKey, promise);
    return promise;
  }

  private async read(policyKey: string, valueKey: string, spec: CounterSpec | null): Promise<LedgerEntry> {
    const repository = this.dataSource.getRepository(UsageLimitCounterEntity);
    let row = await repository.findOne({ where: { policy_key: policyKey, value_key: valueKey } });
    if (!row) {
      if (!spec) throw new Error(`Counter ${policyKey}/${valueKey} is gone`);
      await repository
        .createQueryBuilder()
        .insert()
        .values({
          id: randomUUID(),
          organisation_id: spec.organisationId,
          workspace_id: spec.workspaceId,
          policy_key: spec.policyKey,
          policy_id: spec.policyId,
          value_key: spec.valueKey,
          group_values: spec.groupValues,
          type: spec.type,
          current_usage: 0,
          status: 'active',
          epoch: 0,
          threshold_alert_sent: false,
          exhausted_alert_sent: false,
          reset_rule: spec.resetRule,
          credit_limit: spec.creditLimit ?? null,
          alert_threshold: spec.alertThreshold ?? null,
          next_reset_at: spec.nextResetAt,
          last_reset_at: null,
          // Explicit: SQLite's default timestamp has whole seconds, and entities list in creation order.
          created_at: new Date(),
          updated_at: new Date(),
        })
        // Two replicas creating the same group's row at once: one insert wins, both read it.
        .orIgnore()
        .execute();
      row = await repository.findOneOrFail({ where: { policy_key: policyKey, value_key: valueKey } });
    }
    return toEntry(row);
  }

  /**
   * Starts a new period for a counter whose boundary has passed. Conditional on the epoch, so the
   * job and any number of requests racing for the same boundary reset it exactly once.
   */
  async resetDue(entry: LedgerEntry, now = new Date()): Promise<LedgerEntry> {
    const row = await this.dataSource
      .getRepository(UsageLimitCounterEntity)
      .findOne({ where: { id: entry.rowId } });
    if (row && row.next_reset_at && row.reset_rule && row.next_reset_at.getTime() <= now.getTime()) {
      await this.announceReset(await this.resetRows(this.dataSource.manager, [row], now, 'periodic'));
    }
    this.clear();
    return this.load(entry.policyKey, entry.valueKey, null);
  }

  /**
   * Resets counter rows: usage to 0, alerts re-armed, a new epoch. `periodic` also moves the next
   * boundary on. Each update is conditional on the epoch read, so a row another replica (or a
   * request) already reset is left alone. Returns the live counter keys of the rows this call
   * reset; once the transaction has committed, pass them to `announceReset`.
   */
  async resetRows(
    manager: EntityManager,
    rows: UsageLimitCounterEntity[],
    now: Date,
    mode: 'periodic' | 'manual',
  ): Promise<string[]> {
    const reset: string[] = [];
    for (const row of rows) {
      const changes: Partial<UsageLimitCounterEntity> = {
        current_usage: 0,
        status: 'active',
        epoch: row.epoch + 1,
        threshold_alert_sent: false,
        exhausted_alert_sent: false,
        last_reset_at: now,
      };
      if (mode === 'periodic' && row.reset_rule && row.next_reset_at)
        changes.next_reset_at = nextBoundaryAfter(row.reset_rule, row.next_reset_at, now);
      const result = await manager
        .getRepository(UsageLimitCounterEntity)
        .update({ id: row.id, epoch: row.epoch }, changes);
      if ((result.affected ?? 0) > 0) reset.push(budgetStoreKey(row.policy_key, row.epoch, row.value_key));
    }
    return reset;
  }

  /**
   * An inline budget's limits changed (the key, workspace or provider was edited): record them,
   * and as for a policy, a raised credit limit re-arms both alerts and a raised or cleared
   * threshold re-arms the threshold alert. Exhaustion needs nothing: it is judged against the
   * limit of each request.
   */
  async applyInlineLimits(
    entry: LedgerEntry,
    type: BudgetType,
    limitUnits: number,
    thresholdUnits: number | null,
  ): Promise<void> {
    const raised = entry.limitUnits !== null && limitUnits > entry.limitUnits;
    const thresholdRearmed =
      entry.thresholdUnits !== null && (thresholdUnits === null || thresholdUnits > entry.thresholdUnits);
    const changes: Partial<UsageLimitCounterEntity> = {
      credit_limit: fromUnits(type, limitUnits),
      alert_threshold: thresholdUnits === null ? null : fromUnits(type, thresholdUnits),
    };
    if (raised || thresholdRearmed) changes.threshold_alert_sent = false;
    if (raised) changes.exhausted_alert_sent = false;
    await this.dataSource.getRepository(UsageLimitCounterEntity).update({ id: entry.rowId }, changes);
    entry.limitUnits = limitUnits;
    entry.thresholdUnits = thresholdUnits;
    if (raised || thresholdRearmed) {
      entry.thresholdSent = false;
      if (raised) entry.exhaustedSent = false;
      this.bus.publish(COUNTERS_TOPIC);
    }
  }

  /**
   * The live counters of these rows, in counter units, which the enforcer judges by: they hold
   * settlements the batched writes have not put in the rows yet (other replicas' too, with
   * Redis). Null where no counter exists since the last reset or restart. Rejects when the store
   * cannot be reached.
   */
  async liveUnits(rows: readonly UsageLimitCounterEntity[]): Promise<(number | null)[]> {
    if (rows.length === 0) return [];
    return this.store.readBudgets(
      rows.map((row) => budgetStoreKey(row.policy_key, row.epoch, row.value_key)),
    );
  }

  /** After a committed reset: the old counters go, and every replica re-reads its rows. */
  async announceReset(storeKeys: string[]): Promise<void> {
    if (storeKeys.length === 0) return;
    await Promise.resolve(this.store.dropBudgets(storeKeys)).catch((error: Error) =>
      this.logger.warn(`Could not drop reset counters: ${error.message}`),
    );
    this.bus.publish(COUNTERS_TOPIC);
  }
}

export function toEntry(row: UsageLimitCounterEntity): LedgerEntry {
  return {
    rowId: row.id,
    policyKey: row.policy_key,
    valueKey: row.value_key,
    workspaceId: row.workspace_id,
    epoch: row.epoch,
    seedUnits: toUnits(row.type, decimal(row.current_usage)),
    nextResetAt: row.next_reset_at ? row.next_reset_at.getTime() : null,
    thresholdSent: row.threshold_alert_sent,
    exhaustedSent: row.exhausted_alert_sent,
    limitUnits: row.credit_limit === null ? null : toUnits(row.type, decimal(row.credit_limit)),
    thresholdUnits: row.alert_threshold === null ? null : toUnits(row.type, decimal(row.alert_threshold)),
    storeKey: budgetStoreKey(row.policy_key, row.epoch, row.value_key),
    loadedAt: Date.now(),
  };
}
