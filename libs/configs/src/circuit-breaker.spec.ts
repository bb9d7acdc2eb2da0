import {
  EMPTY_BREAKER,
  MemoryBreakerStore,
  breakerState,
  isBreakerFailure,
  nextBreakerRecord,
} from './circuit-breaker';

describe('circuit breaker', () => {
  const settings = { failure_threshold: 3, cooldown_interval: 1000 };

  it('counts failures in a window and opens at the threshold', () => {
    let record = EMPTY_BREAKER;
    record = nextBreakerRecord(record, settings, true, 100);
    record = nextBreakerRecord(record, settings, false, 200);
    record = nextBreakerRecord(record, settings, true, 300);
    expect(record).toEqual({ failures: 2, total: 3, windowStart: 100, openUntil: 0 });
    expect(breakerState(record, 300)).toBe('closed');
    record = nextBreakerRecord(record, settings, true, 400);
    expect(record.openUntil).toBe(1400);
    expect(breakerState(record, 1399)).toBe('open');
    expect(breakerState(record, 1400)).toBe('half_open');
  });

  it('starts a new window once the cooldown has passed since the first count', () => {
    let record = nextBreakerRecord(EMPTY_BREAKER, settings, true, 0);
    record = nextBreakerRecord(record, settings, true, 500);
    record = nextBreakerRecord(record, settings, true, 1000);
    expect(record).toEqual({ failures: 1, total: 1, windowStart: 1000, openUntil: 0 });
  });

  it('ignores outcomes that arrive while open', () => {
    const open = { failures: 0, total: 0, windowStart: 0, openUntil: 2000 };
    expect(nextBreakerRecord(open, settings, false, 1500)).toBe(open);
  });

  it('closes on a half-open success and reopens on a half-open failure', () => {
    const open = { failures: 0, total: 0, windowStart: 0, openUntil: 2000 };
    expect(nextBreakerRecord(open, settings, false, 2000)).toEqual(EMPTY_BREAKER);
    expect(nextBreakerRecord(open, settings, true, 2500)).toEqual({ ...EMPTY_BREAKER, openUntil: 3500 });
  });

  it('opens on a failure rate only after minimum_requests (default 10)', () => {
    const rate = { failure_threshold_percentage: 50, cooldown_interval: 1000 };
    let record = EMPTY_BREAKER;
    for (let i = 0; i < 9; i += 1) record = nextBreakerRecord(record, rate, true, 10);
    expect(breakerState(record, 10)).toBe('closed');
    record = nextBreakerRecord(record, rate, true, 10);
    expect(breakerState(record, 10)).toBe('open');
    const small = { ...rate, minimum_requests: 2 };
    record = nextBreakerRecord(EMPTY_BREAKER, small, false, 0);
    expect(breakerState(nextBreakerRecord(record, small, true, 0), 0)).toBe('open');
  });

  it('counts 5xx, 408 and timeouts by default, or exactly the configured statuses', () => {
    expect(isBreakerFailure({ status: 500 }, settings)).toBe(true);
    expect(isBreakerFailure({ status: 408, timedOut: true }, settings)).toBe(true);
    expect(isBreakerFailure({ status: 429 }, settings)).toBe(false);
    expect(isBreakerFailure({ status: 200 }, settings)).toBe(false);
    const custom = { ...settings, failure_status_codes: [429] };
    expect(isBreakerFailure({ status: 429 }, custom)).toBe(true);
    expect(isBreakerFailure({ status: 500 }, custom)).toBe(false);
  });

  it('keeps per-key state in memory', async () => {
    const store = new MemoryBreakerStore();
    for (let i = 0; i < 3; i += 1) await store.record('a', settings, true, 0);
    expect(await store.openStates(['a', 'b'], 10)).toEqual([true, false]);
    expect(await store.openStates(['a'], 1000)).toEqual([false]);
    expect(await store.record('a', settings, false, 1000)).toBe('closed');
    expect(await store.inspect('a')).toEqual(EMPTY_BREAKER);
  });
});
