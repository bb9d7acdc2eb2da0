// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkTargets, median, summarise, summaryLines } = require('./summary');

const TARGETS = { addedP50Ms: 0.5, addedP99Ms: 2, addedTtfbMs: 0.5, throughputRps: 5000, rssMb: 200 };

/** A run's report with only what the summary reads. */
function report(
  gateway: { rps: number; p50: number; p99: number; ttfb: number; rss: number },
  floorRps = 15000,
) {
  const result = (rps: number, rss: number) => ({
    saturated: { requestsPerSecond: rps },
    rss: { maxMb: rss },
  });
  return {
    results: { floor: result(floorRps, 135), gateway: result(gateway.rps, gateway.rss) },
    added: {
      floor: { p50Ms: 0.3, p99Ms: 1.5, ttfbP50Ms: 0.3 },
      gateway: { p50Ms: gateway.p50, p99Ms: gateway.p99, ttfbP50Ms: gateway.ttfb },
    },
    ratiosToFloor: { throughput: gateway.rps / floorRps },
  };
}

describe('bench summary', () => {
  it('takes the median of odd and even counts and ignores missing values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([null, 5, undefined, Number.NaN])).toBe(5);
    expect(median([])).toBeNull();
  });

  it('summarises each figure by its median and range, and checks the targets on the medians', () => {
    const summary = summarise(
      [
        report({ rps: 6000, p50: 0.45, p99: 1.2, ttfb: 0.52, rss: 190 }),
        report({ rps: 5000, p50: 0.55, p99: 4.0, ttfb: 0.47, rss: 192 }),
        report({ rps: 7000, p50: 0.48, p99: 1.5, ttfb: 0.49, rss: 205 }),
      ],
      TARGETS,
    );
    expect(summary.runs).toBe(3);
    expect(summary.figures.gateway.addedP99Ms).toEqual({ median: 1.5, min: 1.2, max: 4.0, runs: 3 });
    expect(summary.figures.floor.saturatedRps.median).toBe(15000);
    expect(summary.ratiosToFloor.throughput.median).toBeCloseTo(0.4, 5);
    expect(summary.checks['added p50 ms']).toEqual({ value: 0.48, target: '<= 0.5', pass: true });
    expect(summary.checks['added TTFB p50 ms'].pass).toBe(true);
    // One run over 200 MB does not fail the median; two would.
    expect(summary.checks['RSS max MB']).toEqual({ value: 192, target: '<= 200', pass: true });
    expect(summary.checks['saturated req/s'].pass).toBe(true);
  });

  it('fails a check whose median misses its target', () => {
    const summary = summarise(
      [
        report({ rps: 4000, p50: 0.6, p99: 2.5, ttfb: 0.6, rss: 210 }),
        report({ rps: 4500, p50: 0.7, p99: 3.0, ttfb: 0.55, rss: 220 }),
      ],
      TARGETS,
    );
    for (const check of Object.values(summary.checks) as { pass: boolean }[]) expect(check.pass).toBe(false);
    expect(summary.checks['added p99 ms'].value).toBe(2.75);
  });

  it('prints one row per figure with the floor and the gateway side by side', () => {
    const lines: string[] = summaryLines(
      summarise([report({ rps: 6000, p50: 0.45, p99: 1.2, ttfb: 0.4, rss: 190 })], TARGETS),
    );
    expect(lines[0]).toBe('median of 1 run');
    expect(lines.find((line) => line.startsWith('added p50 ms'))).toMatch(/0\.300\s+0\.450$/);
    expect(lines.some((line) => line.includes('PASS  added p99 ms (median): 1.2'))).toBe(true);
  });

  it('checks one run the same way: an unmeasured figure fails, an absent one is not checked', () => {
    expect(checkTargets({ addedP50Ms: 0.5, saturatedRps: 4999, rssMaxMb: null }, TARGETS)).toEqual({
      'added p50 ms': { value: 0.5, target: '<= 0.5', pass: true },
      'saturated req/s': { value: 4999, target: '>= 5000', pass: false },
      'RSS max MB': { value: null, target: '<= 200', pass: false },
    });
  });
});
