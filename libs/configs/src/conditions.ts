import type { ConditionQuery } from './config.types';

/** What a conditional rule can look at. */
export interface ConditionInput {
  /** Request metadata (`x-gateway-metadata` merged over the key's default metadata). */
  metadata?: Record<string, unknown> | null;
  /** The request body; `params.model` reads `body.model`. */
  params?: Record<string, unknown> | null;
  /** The gateway route name (`chat.completions`, `embeddings`, …). */
  route?: string | null;
  /** The request path, e.g. `/v1/chat/completions`. */
  path?: string | null;
}

const regexCache = new Map<string, RegExp>();
const MAX_CACHED_REGEXES = 1000;

function regex(source: string): RegExp {
  let compiled = regexCache.get(source);
  if (!compiled) {
    compiled = new RegExp(source);
    if (regexCache.size >= MAX_CACHED_REGEXES) regexCache.delete(regexCache.keys().next().value as string);
    regexCache.set(source, compiled);
  }
  return compiled;
}

function lookup(root: unknown, dotted: string): unknown {
  let value = root;
  for (const segment of dotted.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

function read(field: string, input: ConditionInput): unknown {
  if (field === 'route') return input.route ?? undefined;
  if (field === 'url.pathname') return input.path ? input.path.split('?')[0] : undefined;
  if (field.startsWith('metadata.')) return input.metadata?.[field.slice('metadata.'.length)];
  if (field.startsWith('params.')) return lookup(input.params, field.slice('params.'.length));
  return undefined;
}

/** Metadata values are strings: `"3"` compares as 3 against a numeric operand. */
function comparable(value: unknown, operand: unknown): [number | string, number | string] | null {
  if (typeof operand === 'number') {
    const number =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && value.trim() !== ''
          ? Number(value)
          : NaN;
    return Number.isFinite(number) ? [number, operand] : null;
  }
  if (typeof operand === 'string' && typeof value === 'string') return [value, operand];
  return null;
}

function equals(value: unknown, operand: unknown): boolean {
  if (value === operand) return true;
  if (value === undefined) return operand === null;
  // Metadata arrives as strings; `{"$eq": 2}` still matches `"2"`, and `true` matches `"true"`.
  if (typeof value === 'string' && (typeof operand === 'number' || typeof operand === 'boolean'))
    return value === String(operand);
  return false;
}

function holds(operator: string, value: unknown, operand: unknown): boolean {
  switch (operator) {
    case '$eq':
      return equals(value, operand);
    case '$ne':
      return !equals(value, operand);
    case '$in':
      return (operand as unknown[]).some((item) => equals(value, item));
    case '$nin':
      return !(operand as unknown[]).some((item) => equals(value, item));
    case '$regex':
      return (
        (typeof value === 'string' || typeof value === 'number') &&
        regex(operand as string).test(String(value))
      );
    default: {
      const pair = comparable(value, operand);
      if (!pair) return false;
      const [left, right] = pair;
      if (operator === '$gt') return left > right;
      if (operator === '$gte') return left >= right;
      if (operator === '$lt') return left < right;
      return left <= right;
    }
  }
}

/**
 * Evaluates a validated query: every field condition and every operator in it must hold; `$and`
 * needs all sub-queries, `$or` at least one. A missing field matches only `$ne`, `$nin` and
 * `$eq: null`, as in MongoDB.
 */
export function matchesQuery(query: ConditionQuery, input: ConditionInput): boolean {
  for (const [key, condition] of Object.entries(query)) {
    if (condition === undefined) continue;
    if (key === '$and') {
      if (!(condition as ConditionQuery[]).every((sub) => matchesQuery(sub, input))) return false;
      continue;
    }
    if (key === '$or') {
      if (!(condition as ConditionQuery[]).some((sub) => matchesQuery(sub, input))) return false;
      continue;
    }
    const value = read(key, input);
    if (condition === null || typeof condition !== 'object') {
      if (!equals(value, condition)) return false;
      continue;
    }
    for (const [operator, operand] of Object.entries(condition)) {
      if (!holds(operator, value, operand)) return false;
    }
  }
  return true;
}
