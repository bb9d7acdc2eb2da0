import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { InlineBudgetKind, InlineBudgetOwner, InlineUsageStatus } from '@switchboard/common';
import { CounterLedger } from './counter-ledger';
import { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import { InlineBudgetKey, inlineBudgetKeys } from './inline-budgets';
import { decimal } from './policies.mapper';
import { toUnits } from './policy.types';

/** Counter rows read per query: well under SQLite's bound-parameter limit. */
const CHUNK = 500;

/**
 * The `exhausted` status of API keys and providers, derived when they are read: an inline budget
 * is exhausted while its usage in the current period has reached the limit the owner declares
 * now. Nothing is stored beside the counter rows, so a reset (the job's, a request's after the
 * boundary, a manual one) or a raised limit shows at once, and nothing can drift.
 */
@Injectable()
export class InlineBudgetStatus implements InlineUsageStatus {
  private readonly logger = new Logger(InlineBudgetStatus.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ledger: CounterLedger,
  ) {}

  async exhausted(
    kind: InlineBudgetKind,
    owners: readonly InlineBudgetOwner[],
  ): Promise<ReadonlySet<string>> {
    const budgets: (InlineBudgetKey & { ownerId: string })[] = [];
    for (const owner of owners)
      for (const budget of inlineBudgetKeys(kind, owner.id, owner.usageLimits))
        budgets.push({ ...budget, ownerId: owner.id });
    const exhausted = new Set<string>();
    if (budgets.length === 0) return exhausted;
    const used = await this.usedUnits(budgets);
    for (const budget of budgets) {
      // No row yet, or a period whose boundary has passed: nothing used in the current period.
      if ((used.get(`${budget.policyKey}\u0000${budget.valueKey}`) ?? 0) >= budget.limitUnits)
        exhausted.add(budget.ownerId);
    }
    return exhausted;
  }

  /**
   * A manual reset of the owner's inline budgets (a provider's `reset_usage`), as the entity reset
   * of a policy: conditional on each row's epoch, the live counters dropped after the commit.
   */
  async reset(kind: InlineBudgetKind, ownerId: string): Promise<void> {
    const valueKey = `${kind}:${ownerId}`;
    // The value key alone also matches policies grouped by the same thing: only the inline rows go.
    const rows = (
      await this.dataSource.getRepository(UsageLimitCounterEntity).find({ where: { value_key: valueKey } })
    ).filter((row) => row.policy_key.startsWith(`inline:${valueKey}:`));
    if (rows.length === 0) return;
    const keys = await this.dataSource.transaction((manager) =>
      this.ledger.resetRows(manager, rows, new Date(), 'manual'),
    );
    await this.ledger.announceReset(keys);
  }

  /** Usage in the current period, by policy and value key, in counter units. */
  private async usedUnits(budgets: readonly InlineBudgetKey[]): Promise<Map<string, number>> {
    const policyKeys = [...new Set(budgets.map((budget) => budget.policyKey))];
    const rows: UsageLimitCounterEntity[] = [];
    for (let start = 0; start < policyKeys.length; start += CHUNK) {
      rows.push(
        ...(await this.dataSource.getRepository(UsageLimitCounterEntity).find({
          where: { policy_key: In(policyKeys.slice(start, start + CHUNK)) },
        })),
      );
    }
    const now = Date.now();
    const current = rows.filter((row) => row.next_reset_at === null || row.next_reset_at.getTime() > now);
    const live = await this.liveUnits(current);
    const used = new Map<string, number>();
    current.forEach((row, index) =>
      used.set(
        `${row.policy_key}\u0000${row.value_key}`,
        live[index] ?? toUnits(row.type, decimal(row.current_usage)),
      ),
    );
    return used;
  }

  /**
   * The ledger's live counters; when the store cannot be reached, none, and the rows are then the
   * best answer, behind by one flush at most.
   */
  private async liveUnits(rows: readonly UsageLimitCounterEntity[]): Promise<(number | null)[]> {
    try {
      return await this.ledger.liveUnits(rows);
    } catch (error) {
      this.logger.warn(`Budget counters unreadable, status from the database: ${(error as Error).message}`);
      return rows.map(() => null);
    }
  }
}
