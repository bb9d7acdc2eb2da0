import { Inject, Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThanOrEqual, Not } from 'typeorm';
import { InvalidationBus } from '@switchboard/common';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { LockService } from '@switchboard/database';
import { CounterLedger } from './counter-ledger';
import { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import { UsageLimitPolicyEntity } from './entities/usage-limit-policy.entity';
import { nextBoundaryAfter, resetRuleOf } from './periods';
import { POLICIES_TOPIC, PolicyRegistry } from './policy-registry';

const BATCH = 500;
/** A safety stop: each batch moves its rows past `now`, so the loop ends long before this. */
const MAX_BATCHES = 1_000;

/**
 * Resets periodic budgets at their boundaries, once per minute on one replica (a database lock).
 * Idempotent: a counter is reset only when its boundary has passed, and the update is conditional
 * on its epoch, so a second run (or a request resetting it lazily at the same moment) does
 * nothing more. The enforcer also resets a due counter on its first request after the boundary,
 * so a late or missed tick never lets an exhausted period run on.
 */
@Injectable()
export class BudgetResetJob {
  private readonly logger = new Logger(BudgetResetJob.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ledger: CounterLedger,
    private readonly registry: PolicyRegistry,
    private readonly bus: InvalidationBus,
    private readonly locks: LockService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'budget-reset' })
  async tick(): Promise<void> {
    if (!this.config.jobsEnabled) return;
    await this.run();
  }

  /** `now` is a parameter so tests can stand after a boundary without waiting for it. */
  async run(now = new Date()): Promise<{ policies: number; counters: number }> {
    let outcome = { policies: 0, counters: 0 };
    await this.locks.tryRun('job:budget-reset', async () => {
      outcome = await this.resetDue(now);
    });
    if (outcome.counters > 0 || outcome.policies > 0)
      this.logger.log(
        `Reset ${outcome.counters} budget counter(s); ${outcome.policies} policy period(s) advanced`,
      );
    return outcome;
  }

  private async resetDue(now: Date): Promise<{ policies: number; counters: number }> {
    const policies = await this.dataSource.getRepository(UsageLimitPolicyEntity).find({
      where: { status: 'active', next_usage_reset_at: LessThanOrEqual(now) },
    });
    let advanced = 0;
    for (const policy of policies) {
      const rule = resetRuleOf(policy.periodic_reset, policy.periodic_reset_days);
      if (rule === null || policy.next_usage_reset_at === null) continue;
      const result = await this.dataSource.getRepository(UsageLimitPolicyEntity).update(
        { id: policy.id, next_usage_reset_at: policy.next_usage_reset_at },
        {
          next_usage_reset_at: nextBoundaryAfter(rule, policy.next_usage_reset_at, now),
          last_reset_at: now,
        },
      );
      advanced += result.affected ?? 0;
    }

    let counters = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const rows = await this.dataSource.getRepository(UsageLimitCounterEntity).find({
        where: { next_reset_at: LessThanOrEqual(now), reset_rule: Not(IsNull()) },
        order: { next_reset_at: 'ASC', id: 'ASC' },
        take: BATCH,
      });
      if (rows.length === 0) break;
      const keys = await this.dataSource.transaction((manager) =>
        this.ledger.resetRows(manager, rows, now, 'periodic'),
      );
      await this.ledger.announceReset(keys);
      counters += keys.length;
    }

    if (advanced > 0) {
      this.bus.publish(POLICIES_TOPIC);
      await this.registry.reload();
    }
    return { policies: advanced, counters };
  }
}
