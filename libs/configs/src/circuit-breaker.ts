import type Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { CircuitBreakerSettings } from './config.types';

/**
 * Circuit breaker per target. States: closed (counting), open (skipped until `openUntil`),
 * half-open (the cooldown has passed: requests go through and the first outcome decides: a
 * success closes the circuit, a failure opens it for another cooldown).
 *
 * Counting happens in a window as long as the cooldown: a closed circuit whose window started
 * more than `cooldown_interval` ago starts counting afresh, so old failures do not add up.
 */
export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerRecord {
  failures: number;
  total: number;
  /** When the current counting window began (ms); meaningful only while `total` > 0. */
  windowStart: number;
  /** Open until this moment (ms); 0 when closed. Past it the circuit is half-open. */
  openUntil: number;
}

export const EMPTY_BREAKER: BreakerRecord = Object.freeze({
  failures: 0,
  total: 0,
  windowStart: 0,
  openUntil: 0,
});
/** With a failure percentage but no `minimum_requests`, this many requests are needed first. */
export const DEFAULT_MINIMUM_REQUESTS = 10;

export function breakerState(record: BreakerRecord, now: number): BreakerState {
  if (record.openUntil === 0) return 'closed';
  return now < record.openUntil ? 'open' : 'half_open';
}

/** Whether an attempt's outcome counts against the circuit. */
export function isBreakerFailure(
  outcome: { status: number; error?: unknown; timedOut?: boolean },
  settings: CircuitBreakerSettings,
): boolean {
  if (settings.failure_status_codes) return settings.failure_status_codes.includes(outcome.status);
  return outcome.status >= 500 || outcome.timedOut === true || outcome.status === 408;
}

/** The pure transition: the state after one more outcome. */
export function nextBreakerRecord(
  record: BreakerRecord,
  settings: CircuitBreakerSettings,
  failed: boolean,
  now: number,
): BreakerRecord {
  const state = breakerState(record, now);
  if (state === 'open') return record; // a straggler that started before the circuit opened
  if (state === 'half_open') {
    return failed
      ? { failures: 0, total: 0, windowStart: 0, openUntil: now + settings.cooldown_interval }
      : { ...EMPTY_BREAKER };
  }
  let { failures, total, windowStart } = record;
  if (total === 0 || now - windowStart >= settings.cooldown_interval) {
    failures = 0;
    total = 0;
    windowStart = now;
  }
  total += 1;
  if (failed) failures += 1;
  const byCount = settings.failure_threshold !== undefined && failures >= settings.failure_threshold;
  const minimum = settings.minimum_requests ?? DEFAULT_MINIMUM_REQUESTS;
  const byRate =
    settings.failure_threshold_percentage !== undefined &&
    total >= minimum &&
    (failures * 100) / total >= settings.failure_threshold_percentage;
  if (byCount || byRate)
    return { failures: 0, total: 0, windowStart: 0, openUntil: now + settings.cooldown_interval };
  return { failures, total, windowStart, openUntil: 0 };
}

/** Where breaker state lives: this process, or Redis shared by every replica. */
export interface BreakerStore {
  /** For each key: true when the circuit is open (the target is to be skipped). */
  openStates(keys: readonly string[], now: number): Promise<boolean[]>;
  record(key: string, settings: CircuitBreakerSettings, failed: boolean, now: number): Promise<BreakerState>;
  /** The current record, for tests and diagnostics. */
  inspect(key: string): Promise<BreakerRecord>;
}

export class MemoryBreakerStore implements BreakerStore {
  private readonly records = new LRUCache<string, BreakerRecord>({ max: 50_000 });

  async openStates(keys: readonly string[], now: number): Promise<boolean[]> {
    return keys.map((key) => {
      const record = this.records.get(key);
      return record !== undefined && breakerState(record, now) === 'open';
    });
  }

  async record(key: string, settings: CircuitBreakerSettings, failed: boolean, now: number) {
    const next = nextBreakerRecord(this.records.get(key) ?? EMPTY_BREAKER, settings, failed, now);
    if (next.total === 0 && next.openUntil === 0) this.records.delete(key);
    else this.records.set(key, next);
    return breakerState(next, now);
  }

  async inspect(key: string): Promise<BreakerRecord> {
    return { ...(this.records.get(key) ?? EMPTY_BREAKER) };
  }
}

/**
 * The same transition as nextBreakerRecord, run atomically in Redis so concurrent replicas
 * never lose an outcome. Fields: f failures, t total, w window start, o open until.
 */
const RECORD_SCRIPT = `
local f = tonumber(redis.call('HGET', KEYS[1], 'f') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local w = tonumber(redis.call('HGET', KEYS[1], 'w') or '0')
local o = tonumber(redis.call('HGET', KEYS[1], 'o') or '0')
local failed = ARGV[1] == '1'
local now = tonumber(ARGV[2])
local cooldown = tonumber(ARGV[3])
local threshold = tonumber(ARGV[4])
local percentage = tonumber(ARGV[5])
local minimum = tonumber(ARGV[6])
local ttl = tonumber(ARGV[7])
if o > 0 and now < o then return 'open' end
if o > 0 then
  if failed then
    redis.call('HSET', KEYS[1], 'f', 0, 't', 0, 'w', 0, 'o', now + cooldown)
    redis.call('PEXPIRE', KEYS[1], ttl)
    return 'open'
  end
  redis.call('DEL', KEYS[1])
  return 'closed'
end
if t == 0 or now - w >= cooldown then f = 0; t = 0; w = now end
t = t + 1
if failed then f = f + 1 end
local trip = false
if threshold >= 0 and f >= threshold then trip = true end
if percentage >= 0 and t >= minimum and (f * 100) / t >= percentage then trip = true end
if trip then
  redis.call('HSET', KEYS[1], 'f', 0, 't', 0, 'w', 0, 'o', now + cooldown)
else
  redis.call('HSET', KEYS[1], 'f', f, 't', t, 'w', w, 'o', 0)
end
redis.call('PEXPIRE', KEYS[1], ttl)
if trip then return 'open' end
return 'closed'
`;

export class RedisBreakerStore implements BreakerStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'switchboard:cb:',
  ) {}

  async openStates(keys: readonly string[], now: number): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hget(this.prefix + key, 'o');
    const results = (await pipeline.exec()) ?? [];
    return results.map(([error, value]) => {
      if (error) throw error;
      const openUntil = Number(value ?? 0);
      return openUntil > 0 && now < openUntil;
    });
  }

  async record(key: string, settings: CircuitBreakerSettings, failed: boolean, now: number) {
    // Long enough to outlive a window and an open period; an expired record reads as closed.
    const ttl = Math.max(settings.cooldown_interval * 3, 60_000);
    const result = (await this.redis.eval(
      RECORD_SCRIPT,
      1,
      this.prefix + key,
      failed ? '1' : '0',
      String(now),
      String(settings.cooldown_interval),
      String(settings.failure_threshold ?? -1),
      String(settings.failure_threshold_percentage ?? -1),
      String(settings.minimum_requests ?? DEFAULT_MINIMUM_REQUESTS),
      String(ttl),
    )) as BreakerState;
    return result;
  }

  async inspect(key: string): Promise<BreakerRecord> {
    const fields = await this.redis.hmget(this.prefix + key, 'f', 't', 'w', 'o');
    const [failures, total, windowStart, openUntil] = fields.map((value) => Number(value ?? 0));
    return { failures, total, windowStart, openUntil };
  }
}
