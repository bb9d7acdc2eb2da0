import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import { POLICIES_SETTINGS, PoliciesSettings } from './policies.settings';
import { BudgetType, fromUnits } from './policy.types';

interface PendingUsage {
  rowId: string;
  epoch: number;
  type: BudgetType;
  units: number;
  limitUnits: number;
}

const SPILL_PREFIX = 'policy-usage-';

/**
 * Writes settled budget usage to the database off the request path: settlements add to an
 * in-memory delta per counter row, and a timer writes all deltas in one transaction. Each write
 * is `current_usage = current_usage + delta` conditional on the row's epoch, so deltas from
 * several replicas add up and a delta from before a reset is dropped. At shutdown the deltas are
 * written while the database is still open; if it cannot be, they go to a file in the data folder
 * and are replayed at the next start.
 */
@Injectable()
export class UsageRecorder implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(UsageRecorder.name);
  private pending = new Map<string, PendingUsage>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly spillDirectory: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(POLICIES_SETTINGS) private readonly settings: PoliciesSettings,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.spillDirectory = join(config.dataDir, 'policy-spill');
  }

  async onModuleInit(): Promise<void> {
    await this.replaySpills();
    this.timer = setInterval(() => void this.flush(), this.settings.flushIntervalMs);
    this.timer.unref();
  }

  /** On the settlement path: one Map update, no I/O. */
  record(rowId: string, epoch: number, type: BudgetType, units: number, limitUnits: number): void {
    if (units === 0) return;
    const key = `${rowId}|${epoch}`;
    const entry = this.pending.get(key);
    if (entry) {
      entry.units += units;
      entry.limitUnits = limitUnits;
    } else this.pending.set(key, { rowId, epoch, type, units, limitUnits });
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Writes every delta recorded so far; on failure they stay pending for the next attempt. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.pending.size === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write([...batch.values()])
      .catch((error: Error) => {
        this.logger.error(
          `Could not write budget usage (${batch.size} counters); will retry: ${error.message}`,
        );
        for (const [key, usage] of batch) {
          const later = this.pending.get(key);
          if (later) later.units += usage.units;
          else this.pending.set(key, usage);
        }
      })
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Settlements that arrived after the drain above, or a database that would not take them. */
  async onApplicationShutdown(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    if (this.dataSource.isInitialized) await this.flush();
    if (this.pending.size > 0) this.spill([...this.pending.values()]);
  }

  private async write(batch: PendingUsage[]): Promise<void> {
    const now = new Date();
    await this.dataSource.transaction(async (manager) => {
      for (const usage of batch) {
        const delta = fromUnits(usage.type, usage.units);
        const limit = fromUnits(usage.type, usage.limitUnits);
        await manager
          .createQueryBuilder()
          .update(UsageLimitCounterEntity)
          .set({
            current_usage: () => 'current_usage + :delta',
            // The policy's limit as it is now (it may have changed since the settlement); the
            // settled snapshot only for inline budgets, which have no policy row.
            status: () =>
              'CASE WHEN current_usage + :delta >= COALESCE((SELECT p.credit_limit FROM usage_limit_policies p ' +
              "WHERE p.id = usage_limit_counters.policy_id), :limit) THEN 'exhausted' ELSE 'active' END",
            updated_at: now,
          })
          .where('id = :id AND epoch = :epoch', { id: usage.rowId, epoch: usage.epoch })
          .setParameters({ delta, limit })
          .execute();
      }
    });
  }

  private spill(batch: PendingUsage[]): void {
    try {
      mkdirSync(this.spillDirectory, { recursive: true });
      const file = join(this.spillDirectory, `${SPILL_PREFIX}${Date.now()}-${process.pid}.json`);
      writeFileSync(file, JSON.stringify(batch));
      this.pending.clear();
      this.logger.warn(
        `Wrote ${batch.length} unsaved budget usage deltas to ${file}; they are replayed at start`,
      );
    } catch (error) {
      this.logger.error(`Lost ${batch.length} budget usage deltas: ${(error as Error).message}`);
    }
  }

  private async replaySpills(): Promise<void> {
    if (!existsSync(this.spillDirectory)) return;
    const spills = readdirSync(this.spillDirectory).filter(
      (file) => file.startsWith(SPILL_PREFIX) && file.endsWith('.json'),
    );
    for (const name of spills) {
      // Claimed by renaming first, so two processes starting on one data folder never both apply it.
      const file = join(this.spillDirectory, `${name}.replay-${process.pid}`);
      try {
        renameSync(join(this.spillDirectory, name), file);
      } catch {
        continue;
      }
      try {
        const batch = JSON.parse(readFileSync(file, 'utf8')) as PendingUsage[];
        await this.write(batch);
        rmSync(file);
        this.logger.log(`Replayed ${batch.length} budget usage deltas from ${name}`);
      } catch (error) {
        this.logger.error(
          `Could not replay ${name}; it stays for the next start: ${(error as Error).message}`,
        );
        try {
          renameSync(file, join(this.spillDirectory, name));
        } catch {
          // Left under its claimed name; an operator can rename it back.
        }
      }
    }
  }
}
