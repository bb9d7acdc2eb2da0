import type { PeriodicReset } from './policy.types';

/**
 * Budget periods. A rule is `weekly`, `monthly`, `days:<n>` or null (cumulative). Boundaries are
 * in UTC: weekly budgets reset on Mondays at 00:00, monthly ones on the 1st at 00:00, and
 * `periodic_reset_days` ones every n days from `next_usage_reset_at` (or from creation). When
 * `next_usage_reset_at` is given it is the first boundary, whatever the rule, and the next ones
 * follow from it.
 */
export type ResetRule = string | null;

const DAY_MS = 86_400_000;

export function resetRuleOf(
  periodicReset: PeriodicReset | null | undefined,
  days: number | null | undefined,
): ResetRule {
  if (days != null) return `days:${days}`;
  return periodicReset ?? null;
}

export function parseResetRule(
  rule: ResetRule,
): { kind: 'weekly' | 'monthly' } | { kind: 'days'; days: number } | null {
  if (rule === null) return null;
  if (rule === 'weekly' || rule === 'monthly') return { kind: rule };
  const match = /^days:(\d+)$/.exec(rule);
  if (match) return { kind: 'days', days: Number(match[1]) };
  throw new Error(`Unknown reset rule '${rule}'`);
}

function addMonthsUtc(date: Date, months: number): Date {
  const result = new Date(date.getTime());
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}

/** One step of the rule after `boundary`. */
export function stepAfter(rule: ResetRule, boundary: Date): Date {
  const parsed = parseResetRule(rule);
  if (!parsed) throw new Error('A cumulative budget has no next boundary');
  if (parsed.kind === 'days') return new Date(boundary.getTime() + parsed.days * DAY_MS);
  if (parsed.kind === 'weekly') return new Date(boundary.getTime() + 7 * DAY_MS);
  return addMonthsUtc(boundary, 1);
}

/** The first boundary strictly after `now` when none was given. */
export function firstBoundary(rule: ResetRule, now: Date): Date | null {
  const parsed = parseResetRule(rule);
  if (!parsed) return null;
  if (parsed.kind === 'days') return new Date(now.getTime() + parsed.days * DAY_MS);
  if (parsed.kind === 'monthly') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  // Monday is day 1; from a Monday the next Monday is 7 days ahead.
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const daysToMonday = (8 - now.getUTCDay()) % 7 || 7;
  return new Date(midnight + daysToMonday * DAY_MS);
}

/** The boundary that follows `boundary` once `now` has reached it: steps until strictly after `now`. */
export function nextBoundaryAfter(rule: ResetRule, boundary: Date, now: Date): Date {
  let next = stepAfter(rule, boundary);
  // A long outage can skip several periods; one reset covers them all.
  while (next.getTime() <= now.getTime()) next = stepAfter(rule, next);
  return next;
}
