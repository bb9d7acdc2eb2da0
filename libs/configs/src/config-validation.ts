import { getProviderAdapter } from '@switchboard/providers';
import {
  CONDITION_OPERATORS,
  CREDENTIAL_FIELDS,
  CacheSettings,
  CircuitBreakerSettings,
  ConditionQuery,
  ConditionRule,
  ConfigNode,
  GatewayConfig,
  RetrySettings,
  STRATEGY_MODES,
  StrategySettings,
} from './config.types';
import { ConfigErrors } from './configs.errors';

/** Safety limits: far beyond any real routing tree, small enough that a hostile header costs little. */
export const CONFIG_LIMITS = {
  maxDepth: 32,
  maxTargets: 1000,
  maxTargetsPerNode: 100,
  maxRetryAttempts: 5,
  maxRequestTimeoutMs: 60 * 60 * 1000,
  maxCacheAgeSeconds: 365 * 24 * 60 * 60,
  maxStringLength: 8192,
  maxRegexLength: 1000,
  maxConditionDepth: 16,
};

/** Headers a config may never send upstream: the gateway's own key, and framing the client owns. */
const UNFORWARDABLE_HEADERS = new Set([
  'x-gateway-api-key',
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
]);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const CONDITION_FIELD = /^(metadata\.[^.\s][^\s]*|params\.[^.\s][^\s]*|route|url\.pathname)$/;

type Problem = (path: string, problem: string, rule: string) => never;
const fail: Problem = (path, problem, rule) => {
  throw ConfigErrors.invalid(path, problem, rule);
};

const at = (path: string, key: string) => (path ? `${path}.${key}` : key);
const index = (path: string, i: number) => `${path}[${i}]`;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) fail(path, 'must be an object', 'object');
  return value as Record<string, unknown>;
}

function string(value: unknown, path: string, max = CONFIG_LIMITS.maxStringLength): string {
  if (typeof value !== 'string') fail(path, 'must be a string', 'string');
  const text = value as string;
  if (text.length === 0) fail(path, 'must not be empty', 'not_empty');
  if (text.length > max) fail(path, `must be at most ${max} characters`, 'max_length');
  return text;
}

function boolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') fail(path, 'must be true or false', 'boolean');
  return value as boolean;
}

function integer(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(path, 'must be an integer', 'integer');
  const number = value as number;
  if (number < min) fail(path, `must be at least ${min}`, 'min');
  if (number > max) fail(path, `must be at most ${max}`, 'max');
  return number;
}

function statusCodes(value: unknown, path: string): number[] {
  if (!Array.isArray(value)) fail(path, 'must be an array of HTTP status codes', 'array');
  const list = value as unknown[];
  if (list.length === 0) fail(path, 'must list at least one status code', 'not_empty');
  return [...new Set(list.map((code, i) => integer(code, index(path, i), 100, 599)))];
}

function stringList(value: unknown, path: string): string[] {
  if (!Array.isArray(value)) fail(path, 'must be an array of strings', 'array');
  return (value as unknown[]).map((item, i) => string(item, index(path, i), 255));
}

function opaqueList(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, 'must be an array', 'array');
  (value as unknown[]).forEach((item, i) => {
    if (typeof item !== 'string' && !isPlainObject(item))
      fail(index(path, i), 'must be a string or an object', 'string_or_object');
  });
  return structuredClone(value as unknown[]);
}

function params(value: unknown, path: string): Record<string, unknown> {
  return structuredClone(object(value, path));
}

function httpUrl(value: unknown, path: string): string {
  const text = string(value, path, 2048);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(path, 'must be an absolute http(s) URL', 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(path, 'must be an absolute http(s) URL', 'url');
  return text.replace(/\/+$/, '');
}

function provider(value: unknown, path: string): string {
  const text = string(value, path, 256);
  if (text.startsWith('@')) {
    if (!SLUG.test(text.slice(1))) fail(path, "must be '@' followed by a provider slug", 'provider_slug');
    return text;
  }
  if (!getProviderAdapter(text)) fail(path, `names an unknown provider '${text}'`, 'known_provider');
  return text;
}

function anthropicBeta(value: unknown, path: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) fail(path, 'must not be empty', 'not_empty');
    return value.map((item, i) => string(item, index(path, i), 255)).join(',');
  }
  return string(value, path, 2048);
}

function forwardHeaders(value: unknown, path: string): string[] {
  const names = stringList(value, path).map((name, i) => {
    if (!HEADER_NAME.test(name)) fail(index(path, i), 'is not a valid header name', 'header_name');
    const lower = name.toLowerCase();
    if (UNFORWARDABLE_HEADERS.has(lower))
      fail(index(path, i), `may not forward '${lower}'`, 'forbidden_header');
    return lower;
  });
  return [...new Set(names)];
}

function retry(value: unknown, path: string): RetrySettings {
  const input = object(value, path);
  known(input, path, ['attempts', 'on_status_codes', 'use_retry_after_header']);
  if (input.attempts === undefined) fail(at(path, 'attempts'), 'is required', 'required');
  const result: RetrySettings = {
    attempts: integer(input.attempts, at(path, 'attempts'), 0, CONFIG_LIMITS.maxRetryAttempts),
  };
  if (input.on_status_codes !== undefined)
    result.on_status_codes = statusCodes(input.on_status_codes, at(path, 'on_status_codes'));
  if (input.use_retry_after_header !== undefined)
    result.use_retry_after_header = boolean(input.use_retry_after_header, at(path, 'use_retry_after_header'));
  return result;
}

function circuitBreaker(value: unknown, path: string): CircuitBreakerSettings {
  const input = object(value, path);
  known(input, path, [
    'failure_threshold',
    'failure_threshold_percentage',
    'minimum_requests',
    'cooldown_interval',
    'failure_status_codes',
  ]);
  if (input.cooldown_interval === undefined) fail(at(path, 'cooldown_interval'), 'is required', 'required');
  const result: CircuitBreakerSettings = {
    cooldown_interval: integer(
      input.cooldown_interval,
      at(path, 'cooldown_interval'),
      1,
      24 * 60 * 60 * 1000,
    ),
  };
  if (input.failure_threshold !== undefined)
    result.failure_threshold = integer(input.failure_threshold, at(path, 'failure_threshold'), 1, 1_000_000);
  if (input.failure_threshold_percentage !== undefined) {
    const percentagePath = at(path, 'failure_threshold_percentage');
    const percentage = input.failure_threshold_percentage;
    if (typeof percentage !== 'number' || !Number.isFinite(percentage))
      fail(percentagePath, 'must be a number', 'number');
    if ((percentage as number) <= 0 || (percentage as number) > 100)
      fail(percentagePath, 'must be above 0 and at most 100', 'range');
    result.failure_threshold_percentage = percentage as number;
  }
  if (result.failure_threshold === undefined && result.failure_threshold_percentage === undefined)
    fail(path, 'needs failure_threshold or failure_threshold_percentage', 'required');
  if (input.minimum_requests !== undefined)
    result.minimum_requests = integer(input.minimum_requests, at(path, 'minimum_requests'), 1, 1_000_000);
  if (input.failure_status_codes !== undefined)
    result.failure_status_codes = statusCodes(input.failure_status_codes, at(path, 'failure_status_codes'));
  return result;
}

function cache(value: unknown, path: string): CacheSettings {
  const input = object(value, path);
  known(input, path, ['mode', 'max_age']);
  const modePath = at(path, 'mode');
  if (input.mode === undefined) fail(modePath, 'is required', 'required');
  if (input.mode === 'semantic') fail(modePath, "'semantic' is not supported: use 'simple'", 'enum');
  if (input.mode !== 'simple') fail(modePath, "must be 'simple'", 'enum');
  const result: CacheSettings = { mode: 'simple' };
  if (input.max_age !== undefined)
    result.max_age = integer(input.max_age, at(path, 'max_age'), 1, CONFIG_LIMITS.maxCacheAgeSeconds);
  return result;
}

function known(input: Record<string, unknown>, path: string, fields: readonly string[]): void {
  for (const key of Object.keys(input)) {
    if (!fields.includes(key)) fail(at(path, key), 'is not a known field', 'unknown_field');
  }
}

function scalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function conditionQuery(value: unknown, path: string, depth: number): ConditionQuery {
  if (depth > CONFIG_LIMITS.maxConditionDepth)
    fail(path, `nests deeper than ${CONFIG_LIMITS.maxConditionDepth} levels`, 'max_depth');
  const input = object(value, path);
  if (Object.keys(input).length === 0) fail(path, 'must not be empty', 'not_empty');
  const result: ConditionQuery = {};
  for (const [key, condition] of Object.entries(input)) {
    const keyPath = at(path, key);
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition) || condition.length === 0)
        fail(keyPath, 'must be a non-empty array of queries', 'array');
      result[key] = (condition as unknown[]).map((item, i) =>
        conditionQuery(item, index(keyPath, i), depth + 1),
      );
      continue;
    }
    if (key.startsWith('$')) fail(keyPath, 'is not a query operator: use $and or $or', 'operator');
    if (!CONDITION_FIELD.test(key))
      fail(keyPath, 'must be metadata.<key>, params.<path>, route or url.pathname', 'condition_field');
    if (scalar(condition)) {
      result[key] = condition as string;
      continue;
    }
    const operators = object(condition, keyPath);
    if (Object.keys(operators).length === 0) fail(keyPath, 'must name at least one operator', 'not_empty');
    for (const [operator, operand] of Object.entries(operators)) {
      const operatorPath = at(keyPath, operator);
      if (!(CONDITION_OPERATORS as readonly string[]).includes(operator))
        fail(operatorPath, `is not an operator (${CONDITION_OPERATORS.join(', ')})`, 'operator');
      switch (operator) {
        case '$eq':
        case '$ne':
          if (!scalar(operand)) fail(operatorPath, 'must be a string, number, boolean or null', 'scalar');
          break;
        case '$in':
        case '$nin':
          if (!Array.isArray(operand)) fail(operatorPath, 'must be an array', 'array');
          (operand as unknown[]).forEach((item, i) => {
            if (!scalar(item))
              fail(index(operatorPath, i), 'must be a string, number, boolean or null', 'scalar');
          });
          break;
        case '$regex': {
          const source = string(operand, operatorPath, CONFIG_LIMITS.maxRegexLength);
          try {
            new RegExp(source);
          } catch {
            fail(operatorPath, 'is not a valid regular expression', 'regex');
          }
          break;
        }
        default:
          if (typeof operand !== 'string' && (typeof operand !== 'number' || !Number.isFinite(operand)))
            fail(operatorPath, 'must be a number or a string', 'comparable');
      }
    }
    result[key] = structuredClone(operators);
  }
  return result;
}

function strategy(value: unknown, path: string): StrategySettings {
  const input = object(value, path);
  known(input, path, ['mode', 'on_status_codes', 'conditions', 'default', 'cb_config']);
  const modePath = at(path, 'mode');
  if (input.mode === undefined) fail(modePath, 'is required', 'required');
  if (!(STRATEGY_MODES as readonly unknown[]).includes(input.mode))
    fail(modePath, `must be one of ${STRATEGY_MODES.join(', ')}`, 'enum');
  const mode = input.mode as StrategySettings['mode'];
  const result: StrategySettings = { mode };
  if (input.on_status_codes !== undefined) {
    if (mode !== 'fallback')
      fail(at(path, 'on_status_codes'), 'applies only to mode fallback', 'fallback_only');
    result.on_status_codes = statusCodes(input.on_status_codes, at(path, 'on_status_codes'));
  }
  if (mode === 'conditional') {
    const conditionsPath = at(path, 'conditions');
    if (input.conditions === undefined) fail(conditionsPath, 'is required for mode conditional', 'required');
    if (!Array.isArray(input.conditions) || input.conditions.length === 0)
      fail(conditionsPath, 'must be a non-empty array', 'array');
    result.conditions = (input.conditions as unknown[]).map((rule, i): ConditionRule => {
      const rulePath = index(conditionsPath, i);
      const ruleInput = object(rule, rulePath);
      known(ruleInput, rulePath, ['query', 'then']);
      if (ruleInput.query === undefined) fail(at(rulePath, 'query'), 'is required', 'required');
      if (ruleInput.then === undefined) fail(at(rulePath, 'then'), 'is required', 'required');
      return {
        query: conditionQuery(ruleInput.query, at(rulePath, 'query'), 0),
        then: string(ruleInput.then, at(rulePath, 'then'), 255),
      };
    });
    if (input.default === undefined)
      fail(at(path, 'default'), 'is required for mode conditional', 'required');
    result.default = string(input.default, at(path, 'default'), 255);
  } else {
    if (input.conditions !== undefined)
      fail(at(path, 'conditions'), 'applies only to mode conditional', 'conditional_only');
    if (input.default !== undefined)
      fail(at(path, 'default'), 'applies only to mode conditional', 'conditional_only');
  }
  if (input.cb_config !== undefined)
    result.cb_config = circuitBreaker(input.cb_config, at(path, 'cb_config'));
  return result;
}

type FieldValidator = (value: unknown, path: string) => unknown;

const NODE_FIELDS: Record<string, FieldValidator> = {
  name: (value, path) => string(value, path, 255),
  weight: (value, path) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, 'must be a number', 'number');
    if ((value as number) < 0) fail(path, 'must be at least 0', 'min');
    if ((value as number) > 1_000_000) fail(path, 'must be at most 1000000', 'max');
    return value;
  },
  provider,
  virtual_key: (value, path) => {
    const slug = string(value, path, 255);
    if (!SLUG.test(slug)) fail(path, 'must be a virtual key slug', 'slug');
    return slug;
  },
  retry,
  request_timeout: (value, path) => integer(value, path, 1, CONFIG_LIMITS.maxRequestTimeoutMs),
  override_params: params,
  default_params: params,
  drop_params: stringList,
  forward_headers: forwardHeaders,
  cb_config: circuitBreaker,
  cache,
  strict_open_ai_compliance: boolean,
  input_guardrails: opaqueList,
  output_guardrails: opaqueList,
  before_request_hooks: opaqueList,
  after_request_hooks: opaqueList,
};
for (const field of Object.keys(CREDENTIAL_FIELDS)) {
  NODE_FIELDS[field] =
    field === 'custom_host'
      ? httpUrl
      : field === 'anthropic_beta'
        ? anthropicBeta
        : (value, path) => string(value, path);
}

interface WalkState {
  targets: number;
}

function node(value: unknown, path: string, depth: number, state: WalkState): ConfigNode {
  if (depth > CONFIG_LIMITS.maxDepth)
    fail(path, `nests deeper than ${CONFIG_LIMITS.maxDepth} levels`, 'max_depth');
  const input = object(value, path);
  const result: Record<string, unknown> = {};
  for (const [key, fieldValue] of Object.entries(input)) {
    if (key === 'strategy' || key === 'targets') continue;
    const validate = NODE_FIELDS[key];
    if (!validate) fail(at(path, key), 'is not a known config field', 'unknown_field');
    if (fieldValue === undefined) continue;
    if (key === 'cache' && depth > 0)
      fail(at(path, key), 'is read only at the top level of a config', 'top_level_only');
    result[key] = validate(fieldValue, at(path, key));
  }

  const strategyPath = at(path, 'strategy');
  const targetsPath = at(path, 'targets');
  let settings: StrategySettings | undefined;
  if (input.strategy !== undefined) settings = strategy(input.strategy, strategyPath);
  if (input.targets === undefined) {
    if (settings) fail(targetsPath, `is required with strategy mode ${settings.mode}`, 'required');
    return result as ConfigNode;
  }
  if (!Array.isArray(input.targets)) fail(targetsPath, 'must be an array of targets', 'array');
  const rawTargets = input.targets as unknown[];
  if (rawTargets.length === 0) fail(targetsPath, 'must not be empty', 'not_empty');
  if (rawTargets.length > CONFIG_LIMITS.maxTargetsPerNode)
    fail(targetsPath, `may hold at most ${CONFIG_LIMITS.maxTargetsPerNode} targets`, 'max_items');
  state.targets += rawTargets.length;
  if (state.targets > CONFIG_LIMITS.maxTargets)
    fail(targetsPath, `brings the config above ${CONFIG_LIMITS.maxTargets} targets`, 'max_items');
  if (!settings && rawTargets.length > 1)
    fail(at(strategyPath, 'mode'), 'is required when there is more than one target', 'required');
  const targets = rawTargets.map((target, i) => node(target, index(targetsPath, i), depth + 1, state));

  const names = new Map<string, number>();
  targets.forEach((target, i) => {
    if (target.name === undefined) return;
    if (names.has(target.name))
      fail(
        at(index(targetsPath, i), 'name'),
        `repeats the name '${target.name}' of targets[${names.get(target.name)}]`,
        'unique',
      );
    names.set(target.name, i);
  });
  if (settings?.mode === 'conditional') {
    targets.forEach((target, i) => {
      if (target.name === undefined)
        fail(
          at(index(targetsPath, i), 'name'),
          'is required for targets of a conditional strategy',
          'required',
        );
    });
    settings.conditions!.forEach((rule, i) => {
      if (!names.has(rule.then))
        fail(
          at(index(at(strategyPath, 'conditions'), i), 'then'),
          `names no target ('${rule.then}')`,
          'target_name',
        );
    });
    if (!names.has(settings.default!))
      fail(at(strategyPath, 'default'), `names no target ('${settings.default}')`, 'target_name');
  }
  if (settings?.mode === 'loadbalance' && !targets.some((target) => (target.weight ?? 1) > 0))
    fail(targetsPath, 'needs at least one target with a weight above 0', 'weight');

  if (settings) result.strategy = settings;
  result.targets = targets;
  return result as ConfigNode;
}

/**
 * Checks a config object against the config schema and returns a normalised copy (header names
 * lower-cased, custom hosts without a trailing slash, `anthropic_beta` lists joined). Throws an
 * AppError with code AB01 whose message and `param` name the path of the first bad field, e.g.
 * `targets[1].retry.attempts must be at most 5 (rule: max)`.
 */
export function validateConfig(input: unknown): GatewayConfig {
  return node(input, '', 0, { targets: 0 });
}

/** Parses and validates the JSON form of a config (the `x-gateway-config` header). */
export function parseConfigJson(text: string): GatewayConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw ConfigErrors.invalidHeaderJson();
  }
  return validateConfig(parsed);
}
