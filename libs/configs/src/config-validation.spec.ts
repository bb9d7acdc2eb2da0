import { AppError } from '@switchboard/common';
import { CONFIG_LIMITS, parseConfigJson, validateConfig } from './config-validation';

/** The AB01 error a config raises, as `{ param, message }`; fails the test when it is accepted. */
function problem(config: unknown): { status: number; code: string; param: string | null; message: string } {
  try {
    validateConfig(config);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, code: error.code, param: error.param, message: error.message };
  }
  throw new Error(`accepted: ${JSON.stringify(config)}`);
}

const openai = { provider: 'openai', api_key: 'sk-test' };

describe('validateConfig', () => {
  describe('accepts', () => {
    it('the reference examples', () => {
      expect(validateConfig({ retry: { attempts: 3 } })).toEqual({ retry: { attempts: 3 } });
      expect(validateConfig({ virtual_key: 'copy-of-anthrop-b20259' })).toEqual({
        virtual_key: 'copy-of-anthrop-b20259',
      });
      const fallback = {
        retry: { attempts: 5, on_status_codes: [429, 529] },
        cache: { mode: 'simple', max_age: 3600 },
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', virtual_key: 'main-258f4d' },
          { provider: 'azure-openai', virtual_key: 'azure-test-4110dd' },
        ],
      };
      expect(validateConfig(fallback)).toEqual(fallback);
    });

    it('every field of a target', () => {
      const target = {
        name: 'primary',
        weight: 0.5,
        provider: 'azure-openai',
        api_key: 'key',
        custom_host: 'https://example.test/v1/',
        azure_resource_name: 'res',
        azure_deployment_id: 'dep',
        azure_api_version: '2024-10-21',
        azure_entra_scope: 'https://cognitiveservices.azure.com/.default',
        aws_access_key_id: 'AKIA',
        aws_secret_access_key: 'secret',
        aws_session_token: 'token',
        aws_region: 'us-east-1',
        vertex_project_id: 'project',
        vertex_region: 'europe-west4',
        anthropic_beta: ['tools-2024-04-04', 'prompt-caching-2024-07-31'],
        anthropic_version: '2023-06-01',
        openai_organization: 'org',
        openai_project: 'proj',
        retry: { attempts: 2, on_status_codes: [429, 503, 429], use_retry_after_header: false },
        request_timeout: 1500,
        override_params: { model: 'gpt-4o', temperature: 0 },
        default_params: { max_tokens: 100 },
        drop_params: ['user'],
        forward_headers: ['X-Request-Source', 'x-request-source'],
        cb_config: { failure_threshold: 3, cooldown_interval: 1000, failure_status_codes: [500] },
        strict_open_ai_compliance: false,
        input_guardrails: ['pg-abc'],
        output_guardrails: [{ id: 'pg-def' }],
        before_request_hooks: [],
        after_request_hooks: [],
      };
      const result = validateConfig({ strategy: { mode: 'loadbalance' }, targets: [target] });
      const normalised = result.targets![0];
      expect(normalised.custom_host).toBe('https://example.test/v1');
      expect(normalised.anthropic_beta).toBe('tools-2024-04-04,prompt-caching-2024-07-31');
      expect(normalised.forward_headers).toEqual(['x-request-source']);
      expect(normalised.retry!.on_status_codes).toEqual([429, 503]);
      expect(normalised.azure_entra_scope).toBe('https://cognitiveservices.azure.com/.default');
      expect(normalised.cb_config).toEqual({
        failure_threshold: 3,
        cooldown_interval: 1000,
        failure_status_codes: [500],
      });
    });

    it('stored providers by @slug and provider aliases', () => {
      expect(validateConfig({ provider: '@openai-prod' }).provider).toBe('@openai-prod');
      expect(validateConfig({ provider: 'azure' }).provider).toBe('azure');
    });

    it('targets nested to any depth, where a target is itself a config', () => {
      let config: Record<string, unknown> = openai;
      for (let depth = 0; depth < CONFIG_LIMITS.maxDepth; depth += 1)
        config = { strategy: { mode: 'fallback' }, targets: [config, openai] };
      expect(() => validateConfig(config)).not.toThrow();
    });

    it('a single target without a strategy (single mode)', () => {
      expect(validateConfig({ targets: [openai] }).targets).toHaveLength(1);
    });

    it('conditional routing with every operator, $and, $or and a default', () => {
      const config = {
        strategy: {
          mode: 'conditional',
          conditions: [
            { query: { 'metadata.plan': { $eq: 'paid' } }, then: 'smart' },
            { query: { 'metadata.plan': 'free' }, then: 'cheap' },
            {
              query: {
                $and: [
                  { 'params.temperature': { $gt: 0.5, $lte: 1 } },
                  { 'params.max_tokens': { $gte: 10, $lt: 1000 } },
                ],
              },
              then: 'smart',
            },
            {
              query: {
                $or: [
                  { 'params.model': { $in: ['a', 'b'] } },
                  { 'params.model': { $nin: ['c'] } },
                  { 'metadata.env': { $ne: 'prod', $regex: '^stag' } },
                  { route: 'embeddings' },
                  { 'url.pathname': { $regex: '/embeddings$' } },
                ],
              },
              then: 'cheap',
            },
          ],
          default: 'cheap',
        },
        targets: [
          { name: 'smart', ...openai },
          { name: 'cheap', provider: 'anthropic' },
        ],
      };
      expect(validateConfig(config)).toEqual(config);
    });

    it('parses the JSON of the x-gateway-config header', () => {
      expect(parseConfigJson('{"provider":"openai","request_timeout":10}')).toEqual({
        provider: 'openai',
        request_timeout: 10,
      });
    });

    it('does not keep references to the input', () => {
      const input = { override_params: { nested: { a: 1 } } };
      const result = validateConfig(input);
      input.override_params.nested.a = 2;
      expect(result.override_params).toEqual({ nested: { a: 1 } });
    });
  });

  describe('rejects with AB01 naming the path of the bad field', () => {
    it.each<[string, unknown, string, string]>([
      // [title, config, param, message fragment]
      ['a config that is not an object', [], 'config', 'must be an object'],
      ['an unknown field', { provder: 'openai' }, 'provder', 'is not a known config field'],
      ['an unknown provider', { provider: 'nope' }, 'provider', "unknown provider 'nope'"],
      ['a malformed @slug', { provider: '@' }, 'provider', 'provider slug'],
      ['an empty api_key', { api_key: '' }, 'api_key', 'must not be empty'],
      ['a numeric api_key', { api_key: 5 }, 'api_key', 'must be a string'],
      ['a custom host that is not http', { custom_host: 'ftp://x' }, 'custom_host', 'http(s) URL'],
      [
        'a strategy mode that does not exist',
        { strategy: { mode: 'random' }, targets: [openai] },
        'strategy.mode',
        'must be one of',
      ],
      ['a strategy without mode', { strategy: {}, targets: [openai] }, 'strategy.mode', 'is required'],
      ['a strategy without targets', { strategy: { mode: 'fallback' } }, 'targets', 'is required'],
      ['empty targets', { strategy: { mode: 'fallback' }, targets: [] }, 'targets', 'must not be empty'],
      [
        'targets that are not an array',
        { strategy: { mode: 'fallback' }, targets: {} },
        'targets',
        'must be an array',
      ],
      [
        'several targets without a strategy',
        { targets: [openai, openai] },
        'strategy.mode',
        'more than one target',
      ],
      [
        'a target that is not an object',
        { strategy: { mode: 'fallback' }, targets: [openai, 'x'] },
        'targets[1]',
        'must be an object',
      ],
      [
        'retry attempts above 5',
        { strategy: { mode: 'fallback' }, targets: [openai, { ...openai, retry: { attempts: 6 } }] },
        'targets[1].retry.attempts',
        'must be at most 5',
      ],
      ['negative retry attempts', { retry: { attempts: -1 } }, 'retry.attempts', 'must be at least 0'],
      ['fractional retry attempts', { retry: { attempts: 1.5 } }, 'retry.attempts', 'must be an integer'],
      ['retry without attempts', { retry: { on_status_codes: [429] } }, 'retry.attempts', 'is required'],
      [
        'an unknown retry field',
        { retry: { attempts: 1, backoff: 2 } },
        'retry.backoff',
        'is not a known field',
      ],
      [
        'a retry status that is not HTTP',
        { retry: { attempts: 1, on_status_codes: [429, 700] } },
        'retry.on_status_codes[1]',
        'at most 599',
      ],
      [
        'an empty retry status list',
        { retry: { attempts: 1, on_status_codes: [] } },
        'retry.on_status_codes',
        'at least one',
      ],
      [
        'use_retry_after_header that is not boolean',
        { retry: { attempts: 1, use_retry_after_header: 'yes' } },
        'retry.use_retry_after_header',
        'true or false',
      ],
      ['a zero request_timeout', { request_timeout: 0 }, 'request_timeout', 'at least 1'],
      ['a string request_timeout', { request_timeout: '100' }, 'request_timeout', 'must be an integer'],
      [
        'a negative weight',
        { strategy: { mode: 'loadbalance' }, targets: [{ ...openai, weight: -1 }] },
        'targets[0].weight',
        'at least 0',
      ],
      [
        'a weight that is not a number',
        { strategy: { mode: 'loadbalance' }, targets: [{ ...openai, weight: '1' }] },
        'targets[0].weight',
        'must be a number',
      ],
      [
        'a loadbalance where every weight is 0',
        { strategy: { mode: 'loadbalance' }, targets: [{ ...openai, weight: 0 }] },
        'targets',
        'weight above 0',
      ],
      [
        'override_params that is not an object',
        { override_params: [1] },
        'override_params',
        'must be an object',
      ],
      [
        'default_params that is not an object',
        { default_params: 'x' },
        'default_params',
        'must be an object',
      ],
      ['drop_params with a number', { drop_params: ['a', 1] }, 'drop_params[1]', 'must be a string'],
      [
        'a forwarded header with a space',
        { forward_headers: ['bad header'] },
        'forward_headers[0]',
        'valid header name',
      ],
      [
        'forwarding the gateway key',
        { forward_headers: ['X-Gateway-Api-Key'] },
        'forward_headers[0]',
        "may not forward 'x-gateway-api-key'",
      ],
      [
        'cb_config without cooldown',
        { cb_config: { failure_threshold: 3 } },
        'cb_config.cooldown_interval',
        'is required',
      ],
      [
        'cb_config without a threshold',
        { cb_config: { cooldown_interval: 1000 } },
        'cb_config',
        'needs failure_threshold',
      ],
      [
        'a failure percentage above 100',
        { cb_config: { cooldown_interval: 1000, failure_threshold_percentage: 120 } },
        'cb_config.failure_threshold_percentage',
        'at most 100',
      ],
      [
        'minimum_requests of 0',
        { cb_config: { cooldown_interval: 1000, failure_threshold: 1, minimum_requests: 0 } },
        'cb_config.minimum_requests',
        'at least 1',
      ],
      [
        'an unknown cb_config field',
        { cb_config: { cooldown_interval: 1, failure_threshold: 1, cooldown: 5 } },
        'cb_config.cooldown',
        'is not a known field',
      ],
      [
        'a strategy cb_config without cooldown',
        { strategy: { mode: 'fallback', cb_config: { failure_threshold: 1 } }, targets: [openai] },
        'strategy.cb_config.cooldown_interval',
        'is required',
      ],
      ['semantic cache', { cache: { mode: 'semantic' } }, 'cache.mode', "'semantic' is not supported"],
      ['a cache without mode', { cache: { max_age: 10 } }, 'cache.mode', 'is required'],
      ['a zero max_age', { cache: { mode: 'simple', max_age: 0 } }, 'cache.max_age', 'at least 1'],
      [
        'a cache below the top level',
        { strategy: { mode: 'fallback' }, targets: [{ ...openai, cache: { mode: 'simple' } }] },
        'targets[0].cache',
        'top level',
      ],
      [
        'on_status_codes outside fallback',
        { strategy: { mode: 'loadbalance', on_status_codes: [500] }, targets: [openai] },
        'strategy.on_status_codes',
        'only to mode fallback',
      ],
      [
        'conditions outside conditional',
        { strategy: { mode: 'fallback', conditions: [] }, targets: [openai] },
        'strategy.conditions',
        'only to mode conditional',
      ],
      [
        'conditional without conditions',
        { strategy: { mode: 'conditional', default: 'a' }, targets: [{ name: 'a', ...openai }] },
        'strategy.conditions',
        'is required',
      ],
      [
        'conditional without default',
        {
          strategy: { mode: 'conditional', conditions: [{ query: { route: 'x' }, then: 'a' }] },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.default',
        'is required',
      ],
      [
        'a rule naming a missing target',
        {
          strategy: { mode: 'conditional', conditions: [{ query: { route: 'x' }, then: 'b' }], default: 'a' },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].then',
        "names no target ('b')",
      ],
      [
        'a default naming a missing target',
        {
          strategy: { mode: 'conditional', conditions: [{ query: { route: 'x' }, then: 'a' }], default: 'z' },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.default',
        "names no target ('z')",
      ],
      [
        'a conditional target without a name',
        {
          strategy: { mode: 'conditional', conditions: [{ query: { route: 'x' }, then: 'a' }], default: 'a' },
          targets: [{ name: 'a', ...openai }, openai],
        },
        'targets[1].name',
        'is required',
      ],
      [
        'duplicate target names',
        {
          strategy: { mode: 'fallback' },
          targets: [
            { name: 'a', ...openai },
            { name: 'a', ...openai },
          ],
        },
        'targets[1].name',
        "repeats the name 'a'",
      ],
      [
        'a condition on an unknown field',
        {
          strategy: {
            mode: 'conditional',
            conditions: [{ query: { 'headers.x': 'y' }, then: 'a' }],
            default: 'a',
          },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.headers.x',
        'metadata.<key>',
      ],
      [
        'an unknown operator',
        {
          strategy: {
            mode: 'conditional',
            conditions: [{ query: { 'metadata.x': { $like: 'y' } }, then: 'a' }],
            default: 'a',
          },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.metadata.x.$like',
        'is not an operator',
      ],
      [
        '$in with a non-array',
        {
          strategy: {
            mode: 'conditional',
            conditions: [{ query: { 'metadata.x': { $in: 'y' } }, then: 'a' }],
            default: 'a',
          },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.metadata.x.$in',
        'must be an array',
      ],
      [
        'an invalid $regex',
        {
          strategy: {
            mode: 'conditional',
            conditions: [{ query: { 'metadata.x': { $regex: '(' } }, then: 'a' }],
            default: 'a',
          },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.metadata.x.$regex',
        'not a valid regular expression',
      ],
      [
        '$gt with an object',
        {
          strategy: {
            mode: 'conditional',
            conditions: [{ query: { 'params.t': { $gt: {} } }, then: 'a' }],
            default: 'a',
          },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.params.t.$gt',
        'number or a string',
      ],
      [
        'an empty $or',
        {
          strategy: { mode: 'conditional', conditions: [{ query: { $or: [] }, then: 'a' }], default: 'a' },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.$or',
        'non-empty array',
      ],
      [
        'a $not operator at query level',
        {
          strategy: { mode: 'conditional', conditions: [{ query: { $not: [] }, then: 'a' }], default: 'a' },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query.$not',
        'use $and or $or',
      ],
      [
        'a rule without query',
        {
          strategy: { mode: 'conditional', conditions: [{ then: 'a' }], default: 'a' },
          targets: [{ name: 'a', ...openai }],
        },
        'strategy.conditions[0].query',
        'is required',
      ],
      [
        'a bad nested leaf',
        {
          strategy: { mode: 'fallback' },
          targets: [
            openai,
            { strategy: { mode: 'fallback' }, targets: [openai, { ...openai, request_timeout: -5 }] },
          ],
        },
        'targets[1].targets[1].request_timeout',
        'at least 1',
      ],
      [
        'a guardrail list that is not an array',
        { input_guardrails: 'pg-x' },
        'input_guardrails',
        'must be an array',
      ],
      [
        'strict_open_ai_compliance that is not boolean',
        { strict_open_ai_compliance: 1 },
        'strict_open_ai_compliance',
        'true or false',
      ],
    ])('%s', (_title, config, param, fragment) => {
      const found = problem(config);
      expect(found).toMatchObject({ status: 400, code: 'AB01', param });
      expect(found.message).toContain(param === 'config' ? 'config' : param);
      expect(found.message).toContain(fragment);
      expect(found.message).toMatch(/\(rule: [a-z_]+\)$/);
    });

    it('nesting deeper than the limit', () => {
      let config: Record<string, unknown> = openai;
      for (let depth = 0; depth <= CONFIG_LIMITS.maxDepth; depth += 1)
        config = { strategy: { mode: 'single' }, targets: [config] };
      expect(problem(config).message).toContain('nests deeper than');
    });

    it('more targets than the limit', () => {
      const wide = { strategy: { mode: 'fallback' }, targets: Array.from({ length: 100 }, () => openai) };
      const config = { strategy: { mode: 'fallback' }, targets: Array.from({ length: 11 }, () => wide) };
      expect(problem(config).message).toContain(`above ${CONFIG_LIMITS.maxTargets} targets`);
    });

    it('header JSON that does not parse', () => {
      expect(() => parseConfigJson('{"provider":')).toThrow(
        expect.objectContaining({ status: 400, code: 'AB01', param: 'x-gateway-config' }),
      );
    });
  });
});
