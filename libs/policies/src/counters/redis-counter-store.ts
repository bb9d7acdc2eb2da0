import type Redis from 'ioredis';
import { redisClient } from '@switchboard/common';
import { CounterStore, ReleaseInput, ReserveInput, ReserveResult, SettleInput } from './counter-store';
import { RELEASE_SCRIPT, RESERVE_SCRIPT, SETTLE_SCRIPT } from './redis-scripts';

type ScriptRunner = (numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

interface ScriptedRedis extends Redis {
  policyReserve: ScriptRunner;
  policySettle: ScriptRunner;
  policyRelease: ScriptRunner;
}

export interface RedisCounterStoreOptions {
  url: string;
  /** Prepended to every key, so several deployments (or test files) can share one Redis. */
  prefix: string;
  /** Budget counters expire after this long without a write; they are re-seeded from the database. */
  budgetTtlMs: number;
  /** Tests of the sliding window pass a clock; otherwise Redis's TIME is the one clock. */
  clock?: () => number;
}

/**
 * The shared store: one Lua script per operation, so a reservation across several policies is
 * one round trip and atomic on the server. Commands time out rather than hang a request.
 */
export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis' as const;
  private readonly redis: ScriptedRedis;

  constructor(private readonly options: RedisCounterStoreOptions) {
    this.redis = new (redisClient())(options.url, {
      maxRetriesPerRequest: 1,
      commandTimeout: 2_000,
      enableOfflineQueue: true,
    }) as ScriptedRedis;
    this.redis.defineCommand('policyReserve', { lua: RESERVE_SCRIPT });
    this.redis.defineCommand('policySettle', { lua: SETTLE_SCRIPT });
    this.redis.defineCommand('policyRelease', { lua: RELEASE_SCRIPT });
  }

  /** For error listeners (a broken connection is logged by the owner, not thrown at random). */
  get client(): Redis {
    return this.redis;
  }

  private now(): number {
    return this.options.clock ? this.options.clock() : 0;
  }

  private budgetKeys(key: string): [string, string] {
    const full = this.options.prefix + key;
    return [full, `${full}:res`];
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const keys: string[] = [];
    const args: (string | number)[] = [
      this.now(),
      input.id,
      input.ttlMs,
      this.options.budgetTtlMs,
      input.rates.length,
      input.budgets.length,
    ];
    for (const rate of input.rates) {
      keys.push(this.options.prefix + rate.key);
      args.push(rate.slotMs, rate.limit, rate.amount);
    }
    for (const budget of input.budgets) {
      keys.push(...this.budgetKeys(budget.key));
      args.push(budget.limit, budget.amount, budget.seed);
    }
    const reply = (await this.redis.policyReserve(keys.length, ...keys, ...args)) as (number | string)[];
    const now = Number(reply[1]);
    if (Number(reply[0]) === 1) {
      const rates = input.rates.map((_rate, index) => ({
        used: Number(reply[2 + index * 2]),
        resetMs: Number(reply[3 + index * 2]),
      }));
      const offset = 2 + input.rates.length * 2;
      const budgets = input.budgets.map((_budget, index) => ({
        used: Number(reply[offset + index * 2]),
        reserved: Number(reply[offset + 1 + index * 2]),
      }));
      return { admitted: true, now, rates, budgets };
    }
    const separator = reply.indexOf('|');
    const rateFailures = [];
    for (let index = 2; index < separator; index += 3) {
      rateFailures.push({
        index: Number(reply[index]),
        used: Number(reply[index + 1]),
        retryAfterMs: Number(reply[index + 2]),
      });
    }
    const budgetFailures = [];
    for (let index = separator + 1; index < reply.length; index += 3) {
      budgetFailures.push({
        index: Number(reply[index]),
        used: Number(reply[index + 1]),
        reserved: Number(reply[index + 2]),
      });
    }
    return { admitted: false, now, rateFailures, budgetFailures };
  }

  async settle(input: SettleInput): Promise<number[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [
      this.now(),
      input.id,
      this.options.budgetTtlMs,
      input.rates.length,
      input.budgets.length,
    ];
    for (const rate of input.rates) {
      keys.push(this.options.prefix + rate.key);
      args.push(rate.slot, rate.slotMs, rate.delta);
    }
    for (const budget of input.budgets) {
      keys.push(...this.budgetKeys(budget.key));
      args.push(budget.actual, budget.seed);
    }
    const reply = (await this.redis.policySettle(keys.length, ...keys, ...args)) as (number | string)[];
    return reply.map(Number);
  }

  async release(input: ReleaseInput): Promise<void> {
    const keys: string[] = [];
    const args: (string | number)[] = [this.now(), input.id, input.rates.length, input.budgets.length];
    for (const rate of input.rates) {
      keys.push(this.options.prefix + rate.key);
      args.push(rate.slot, rate.slotMs, rate.amount);
    }
    for (const budget of input.budgets) keys.push(...this.budgetKeys(budget.key));
    await this.redis.policyRelease(keys.length, ...keys, ...args);
  }

  async readBudgets(keys: readonly string[]): Promise<(number | null)[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hget(this.options.prefix + key, 'u');
    const results = (await pipeline.exec()) ?? [];
    return results.map(([error, value]) => {
      if (error) throw error;
      return value === null || value === undefined ? null : Number(value);
    });
  }

  async dropBudgets(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.redis.del(...keys.flatMap((key) => this.budgetKeys(key)));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
