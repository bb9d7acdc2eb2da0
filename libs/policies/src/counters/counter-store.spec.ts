import Redis from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { CounterStore, RateCharge, ReserveInput } from './counter-store';
import { MemoryCounterStore } from './memory-counter-store';
import { RedisCounterStore } from './redis-counter-store';

const REDIS_URL = process.env.REDIS_URL ?? '';

interface Harness {
  store: CounterStore;
  setTime(ms: number): void;
  cleanup(): Promise<void>;
}

function memoryHarness(): Harness {
  let time = 1_000_000_000_000;
  const store = new MemoryCounterStore(() => time);
  return { store, setTime: (ms) => (time = ms), cleanup: () => store.close() };
}

function redisHarness(): Harness {
  let time = 1_000_000_000_000;
  const prefix = `sbtest:unit:${randomBytes(4).toString('hex')}:`;
  const store = new RedisCounterStore({ url: REDIS_URL, prefix, budgetTtlMs: 60_000, clock: () => time });
  return {
    store,
    setTime: (ms) => (time = ms),
    cleanup: async () => {
      const admin = new Redis(REDIS_URL);
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
      await store.close();
    },
  };
}

const rpm = (key: string, limit: number, amount = 1): RateCharge => ({ key, slotMs: 1_000, limit, amount });
const reservation = (over: Partial<ReserveInput>): ReserveInput => ({
  id: randomUUID(),
  ttlMs: 60_000,
  rates: [],
  budgets: [],
  ...over,
});

const kinds: [string, () => Harness][] = [['in-process', memoryHarness]];
if (REDIS_URL) kinds.push(['redis', redisHarness]);
else it.skip('Redis counter store [skipped: REDIS_URL is not set]', () => undefined);

describe.each(kinds)('%s counter store', (_name, make) => {
  let harness: Harness;
  const T0 = 1_000_000_000_000; // a whole second: slot boundaries are easy to reason about
  beforeEach(() => {
    harness = make();
    harness.setTime(T0 + 500);
  });
  afterEach(() => harness.cleanup());

  it('200 concurrent reservations against a limit of 50 admit exactly 50', async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        Promise.resolve(harness.store.reserve(reservation({ rates: [rpm('r:a', 50)] }))),
      ),
    );
    expect(results.filter((result) => result.admitted)).toHaveLength(50);
  });

  it('slides: a full window frees its oldest slot one unit (plus a slot) later', async () => {
    for (let index = 0; index < 50; index++)
      expect((await harness.store.reserve(reservation({ rates: [rpm('r:b', 50)] }))).admitted).toBe(true);
    harness.setTime(T0 + 30_000);
    const refused = await harness.store.reserve(reservation({ rates: [rpm('r:b', 50)] }));
    expect(refused).toMatchObject({
      admitted: false,
      rateFailures: [{ index: 0, used: 50, retryAfterMs: 31_000 }],
    });
    harness.setTime(T0 + 60_900);
    expect((await harness.store.reserve(reservation({ rates: [rpm('r:b', 50)] }))).admitted).toBe(false);
    harness.setTime(T0 + 61_000);
    const admitted = await harness.store.reserve(reservation({ rates: [rpm('r:b', 50)] }));
    expect(admitted).toMatchObject({ admitted: true, rates: [{ used: 1 }] });
  });

  it('never lets more than the limit through in any span of one unit, even across a boundary', async () => {
    harness.setTime(T0 + 59_900);
    let admitted = 0;
    for (let index = 0; index < 60; index++)
      if ((await harness.store.reserve(reservation({ rates: [rpm('r:c', 50)] }))).admitted) admitted++;
    harness.setTime(T0 + 60_100);
    for (let index = 0; index < 60; index++)
      if ((await harness.store.reserve(reservation({ rates: [rpm('r:c', 50)] }))).admitted) admitted++;
    expect(admitted).toBe(50);
  });

  it('is all or nothing: a refusal by one policy counts nothing in the others', async () => {
    for (let index = 0; index < 2; index++)
      await harness.store.reserve(reservation({ rates: [rpm('r:full', 2)] }));
    const refused = await harness.store.reserve(
      reservation({ rates: [rpm('r:open', 10), rpm('r:full', 2)] }),
    );
    expect(refused).toMatchObject({ admitted: false, rateFailures: [{ index: 1 }] });
    const next = await harness.store.reserve(reservation({ rates: [rpm('r:open', 10)] }));
    expect(next).toMatchObject({ admitted: true, rates: [{ used: 1 }] });
  });

  it('token windows take the estimate, then the settled difference; release gives it back', async () => {
    const first = await harness.store.reserve(reservation({ rates: [rpm('r:tok', 100, 30)] }));
    expect(first).toMatchObject({ admitted: true, rates: [{ used: 30 }] });
    const slot = Math.floor((T0 + 500) / 1_000);
    await harness.store.settle({
      id: 'x',
      rates: [{ key: 'r:tok', slot, slotMs: 1_000, delta: 45 }],
      budgets: [],
    });
    const second = await harness.store.reserve(reservation({ rates: [rpm('r:tok', 100, 30)] }));
    expect(second).toMatchObject({ admitted: false, rateFailures: [{ used: 75 }] });
    await harness.store.release({
      id: 'x',
      rates: [{ key: 'r:tok', slot, slotMs: 1_000, amount: 50 }],
      budgets: [],
    });
    const third = await harness.store.reserve(reservation({ rates: [rpm('r:tok', 100, 30)] }));
    expect(third).toMatchObject({ admitted: true, rates: [{ used: 55 }] });
  });

  it('a token window with no estimate admits while any room is left', async () => {
    expect((await harness.store.reserve(reservation({ rates: [rpm('r:zero', 10, 0)] }))).admitted).toBe(true);
    const slot = Math.floor((T0 + 500) / 1_000);
    await harness.store.settle({
      id: 'x',
      rates: [{ key: 'r:zero', slot, slotMs: 1_000, delta: 10 }],
      budgets: [],
    });
    expect((await harness.store.reserve(reservation({ rates: [rpm('r:zero', 10, 0)] }))).admitted).toBe(
      false,
    );
  });

  it('budgets: concurrent reservations never exceed the limit; settlement replaces the estimate', async () => {
    const charge = { key: 'b:1', limit: 50, amount: 1, seed: 0 };
    const results = await Promise.all(
      Array.from({ length: 200 }, (_v, index) =>
        Promise.resolve(harness.store.reserve(reservation({ id: `res-${index}`, budgets: [charge] }))),
      ),
    );
    const admitted = results
      .map((result, index) => ({ result, index }))
      .filter(({ result }) => result.admitted);
    expect(admitted).toHaveLength(50);
    // Half settle with the estimate, half release (the call failed): 25 used, room for 25 more.
    for (const [position, { index }] of admitted.entries()) {
      if (position % 2 === 0)
        await harness.store.settle({
          id: `res-${index}`,
          rates: [],
          budgets: [{ key: 'b:1', actual: 1, seed: 0 }],
        });
      else await harness.store.release({ id: `res-${index}`, rates: [], budgets: [{ key: 'b:1' }] });
    }
    expect(await harness.store.readBudgets(['b:1', 'b:none'])).toEqual([25, null]);
    const more = await Promise.all(
      Array.from({ length: 40 }, () =>
        Promise.resolve(harness.store.reserve(reservation({ budgets: [charge] }))),
      ),
    );
    expect(more.filter((result) => result.admitted)).toHaveLength(25);
  });

  it('budgets start from the persisted usage and forget it only when dropped', async () => {
    const refused = await harness.store.reserve(
      reservation({ budgets: [{ key: 'b:2', limit: 10, amount: 1, seed: 10 }] }),
    );
    expect(refused).toMatchObject({ admitted: false, budgetFailures: [{ index: 0, used: 10, reserved: 0 }] });
    // A later seed does not overwrite the live counter.
    const still = await harness.store.reserve(
      reservation({ budgets: [{ key: 'b:2', limit: 10, amount: 1, seed: 0 }] }),
    );
    expect(still.admitted).toBe(false);
    await harness.store.dropBudgets(['b:2']);
    const fresh = await harness.store.reserve(
      reservation({ budgets: [{ key: 'b:2', limit: 10, amount: 1, seed: 0 }] }),
    );
    expect(fresh).toMatchObject({ admitted: true, budgets: [{ used: 0, reserved: 1 }] });
  });

  it('an abandoned reservation expires, and its budget comes back', async () => {
    const charge = { key: 'b:3', limit: 5, amount: 5, seed: 0 };
    expect((await harness.store.reserve(reservation({ budgets: [charge], ttlMs: 1_000 }))).admitted).toBe(
      true,
    );
    expect((await harness.store.reserve(reservation({ budgets: [charge] }))).admitted).toBe(false);
    harness.setTime(T0 + 2_000);
    expect((await harness.store.reserve(reservation({ budgets: [charge] }))).admitted).toBe(true);
  });

  it('settling after the reservation expired still counts the actual usage', async () => {
    const id = randomUUID();
    await harness.store.reserve(
      reservation({ id, ttlMs: 1_000, budgets: [{ key: 'b:4', limit: 10, amount: 4, seed: 0 }] }),
    );
    harness.setTime(T0 + 5_000);
    await harness.store.reserve(reservation({ budgets: [{ key: 'b:4', limit: 10, amount: 10, seed: 0 }] }));
    const used = await harness.store.settle({ id, rates: [], budgets: [{ key: 'b:4', actual: 3, seed: 0 }] });
    expect(used).toEqual([3]);
  });
});

describe('Redis counter store without a reachable server', () => {
  it('rejects a reservation quickly instead of hanging the request', async () => {
    const store = new RedisCounterStore({ url: 'redis://127.0.0.1:1', prefix: 'none:', budgetTtlMs: 1000 });
    store.client.on('error', () => undefined);
    const started = Date.now();
    await expect(
      store.reserve({ id: 'x', ttlMs: 1000, rates: [rpm('r:down', 5)], budgets: [] }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
    store.client.disconnect();
  });
});
