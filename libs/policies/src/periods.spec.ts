import { firstBoundary, nextBoundaryAfter, parseResetRule, resetRuleOf, stepAfter } from './periods';

const at = (iso: string) => new Date(iso);

describe('budget periods', () => {
  it('encodes periodic_reset_days ahead of periodic_reset', () => {
    expect(resetRuleOf('weekly', null)).toBe('weekly');
    expect(resetRuleOf(null, 30)).toBe('days:30');
    expect(resetRuleOf(undefined, undefined)).toBeNull();
    expect(parseResetRule('days:7')).toEqual({ kind: 'days', days: 7 });
    expect(() => parseResetRule('hourly')).toThrow("Unknown reset rule 'hourly'");
  });

  it('a weekly budget first resets on the next Monday at 00:00 UTC', () => {
    expect(firstBoundary('weekly', at('2026-03-04T15:00:00Z'))).toEqual(at('2026-03-09T00:00:00Z')); // Wednesday
    expect(firstBoundary('weekly', at('2026-03-08T23:59:59Z'))).toEqual(at('2026-03-09T00:00:00Z')); // Sunday
    expect(firstBoundary('weekly', at('2026-03-09T00:00:00Z'))).toEqual(at('2026-03-16T00:00:00Z')); // Monday
  });

  it('a monthly budget first resets on the 1st of the next month at 00:00 UTC', () => {
    expect(firstBoundary('monthly', at('2026-01-31T10:00:00Z'))).toEqual(at('2026-02-01T00:00:00Z'));
    expect(firstBoundary('monthly', at('2026-12-15T00:00:00Z'))).toEqual(at('2027-01-01T00:00:00Z'));
  });

  it('an every-n-days budget first resets n days after now', () => {
    expect(firstBoundary('days:3', at('2026-03-01T12:00:00Z'))).toEqual(at('2026-03-04T12:00:00Z'));
    expect(firstBoundary(null, at('2026-03-01T12:00:00Z'))).toBeNull();
  });

  it('steps by the rule, months by the calendar with the day clamped', () => {
    expect(stepAfter('weekly', at('2026-03-09T00:00:00Z'))).toEqual(at('2026-03-16T00:00:00Z'));
    expect(stepAfter('monthly', at('2026-01-31T00:00:00Z'))).toEqual(at('2026-02-28T00:00:00Z'));
    expect(stepAfter('monthly', at('2024-01-31T00:00:00Z'))).toEqual(at('2024-02-29T00:00:00Z'));
    expect(stepAfter('days:10', at('2026-03-01T00:00:00Z'))).toEqual(at('2026-03-11T00:00:00Z'));
    expect(() => stepAfter(null, at('2026-03-01T00:00:00Z'))).toThrow();
  });

  it('skips every period missed while nobody reset, landing strictly after now', () => {
    const boundary = at('2026-03-01T00:00:00Z');
    expect(nextBoundaryAfter('days:1', boundary, at('2026-03-05T06:00:00Z'))).toEqual(
      at('2026-03-06T00:00:00Z'),
    );
    expect(nextBoundaryAfter('days:1', boundary, at('2026-03-01T00:00:00Z'))).toEqual(
      at('2026-03-02T00:00:00Z'),
    );
    expect(nextBoundaryAfter('monthly', boundary, at('2026-05-01T00:00:00Z'))).toEqual(
      at('2026-06-01T00:00:00Z'),
    );
  });
});
