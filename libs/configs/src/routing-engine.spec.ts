import { AppError } from '@switchboard/common';
import { MemoryBreakerStore } from './circuit-breaker';
import { validateConfig } from './config-validation';
import {
  AttemptContext,
  AttemptOutcome,
  EngineOptions,
  LeafTarget,
  RoutingRequest,
  applyParams,
  executeConfig,
  leafTargets,
  retryAfterMs,
} from './routing-engine';

type Step = Partial<AttemptOutcome<string>> | 'hang' | Error;

/** Fake targets: each named target answers its script in order (the last step repeats). */
function fakeTargets(scripts: Record<string, Step[]>) {
  const calls: { name: string; target: LeafTarget; context: AttemptContext }[] = [];
  const attempt = async (target: LeafTarget, context: AttemptContext): Promise<AttemptOutcome<string>> => {
    const name = target.name ?? target.provider ?? 'root';
    const script = scripts[name];
    if (!script) throw new Error(`no script for ${name}`);
    const served = calls.filter((call) => call.name === name).length;
    calls.push({ name, target, context });
    const step = script[Math.min(served, script.length - 1)];
    if (step === 'hang') {
      return new Promise((_resolve, reject) => {
        context.signal.addEventListener('abort', () => reject(context.signal.reason));
      });
    }
    if (step instanceof Error) throw step;
    return { status: 200, result: name, ...step };
  };
  return { attempt, calls, names: () => calls.map((call) => call.name) };
}

/** A seeded generator (mulberry32): the same draws on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const noSleep = { sleep: async () => undefined } satisfies EngineOptions;
const target = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: 'openai',
  ...extra,
});

async function run(
  config: unknown,
  scripts: Record<string, Step[]>,
  request: RoutingRequest = {},
  options: EngineOptions = noSleep,
) {
  const fake = fakeTargets(scripts);
  const result = await executeConfig(validateConfig(config), request, fake.attempt, options);
  return { result, ...fake };
}

describe('routing engine', () => {
  describe('single', () => {
    it('calls a config without targets once, with its provider and credentials', async () => {
      const { result, calls } = await run(
        {
          provider: 'azure-openai',
          api_key: 'k',
          azure_resource_name: 'r',
          azure_entra_scope: 's',
          anthropic_beta: ['a', 'b'],
        },
        { 'azure-openai': [{ status: 200 }] },
      );
      expect(result).toMatchObject({ ok: true, servedBy: '', retryCount: 0, aborted: false });
      expect(calls).toHaveLength(1);
      expect(calls[0].target).toMatchObject({
        provider: 'azure-openai',
        credentials: { apiKey: 'k', azureResourceName: 'r', azureEntraScope: 's', anthropicBeta: 'a,b' },
      });
    });

    it('leaves the provider to the request when the config names none', async () => {
      const { result, calls } = await run({ retry: { attempts: 1 } }, { root: [{ status: 200 }] });
      expect(result.ok).toBe(true);
      expect(calls[0].target.provider).toBeUndefined();
      expect(calls[0].target.retry).toEqual({ attempts: 1 });
    });

    it('uses the first target of a single strategy', async () => {
      const { result, names } = await run(
        { strategy: { mode: 'single' }, targets: [target('a'), target('b')] },
        { a: [{ status: 500 }], b: [{ status: 200 }] },
      );
      expect(names()).toEqual(['a']);
      expect(result).toMatchObject({ ok: false, servedBy: 'targets[0]', outcome: { status: 500 } });
    });
  });

  describe('fallback', () => {
    const chain = { strategy: { mode: 'fallback' }, targets: [target('a'), target('b'), target('c')] };

    it('a chain of three rescues the request and records each attempt', async () => {
      const { result, names } = await run(chain, {
        a: [{ status: 500, error: new Error('boom') }],
        b: [{ status: 429, retryAfterMs: 1000 }],
        c: [{ status: 200 }],
      });
      expect(names()).toEqual(['a', 'b', 'c']);
      expect(result).toMatchObject({
        ok: true,
        servedBy: 'targets[2]',
        outcome: { status: 200, result: 'c' },
      });
      expect(
        result.attempts.map(({ path, status, error, retryAfterMs }) => ({
          path,
          status,
          error,
          retryAfterMs,
        })),
      ).toEqual([
        { path: 'targets[0]', status: 500, error: 'boom', retryAfterMs: undefined },
        { path: 'targets[1]', status: 429, error: undefined, retryAfterMs: 1000 },
        { path: 'targets[2]', status: 200, error: undefined, retryAfterMs: undefined },
      ]);
    });

    it('stops at the first success', async () => {
      const { names, result } = await run(chain, { a: [{ status: 200 }], b: [{}], c: [{}] });
      expect(names()).toEqual(['a']);
      expect(result.servedBy).toBe('targets[0]');
    });

    it('returns the last failure when every target fails', async () => {
      const { result } = await run(chain, {
        a: [{ status: 500 }],
        b: [{ status: 502 }],
        c: [{ status: 503 }],
      });
      expect(result).toMatchObject({ ok: false, servedBy: 'targets[2]', outcome: { status: 503 } });
      expect(result.attempts).toHaveLength(3);
    });

    it('treats a thrown error as a failure: its status, or 502', async () => {
      const notFound = new AppError(404, 'virtual_key_not_found', 'gone');
      const { result } = await run(chain, {
        a: [new Error('ECONNREFUSED')],
        b: [notFound],
        c: [{ status: 200 }],
      });
      expect(result.attempts.map((attempt) => attempt.status)).toEqual([502, 404, 200]);
      expect(result.ok).toBe(true);
    });

    it('with on_status_codes, moves on only for those statuses', async () => {
      const config = {
        strategy: { mode: 'fallback', on_status_codes: [429, 503] },
        targets: [target('a'), target('b')],
      };
      const stopped = await run(config, { a: [{ status: 400 }], b: [{ status: 200 }] });
      expect(stopped.names()).toEqual(['a']);
      expect(stopped.result.outcome.status).toBe(400);
      const moved = await run(config, { a: [{ status: 503 }], b: [{ status: 200 }] });
      expect(moved.names()).toEqual(['a', 'b']);
    });

    it('never falls back once bytes reached the client (a stream that broke)', async () => {
      const { result, names } = await run(chain, {
        a: [{ status: 200, committed: true, error: new Error('upstream dropped mid-stream') }],
        b: [{ status: 200 }],
        c: [{}],
      });
      expect(names()).toEqual(['a']);
      expect(result).toMatchObject({ ok: false, servedBy: 'targets[0]' });
    });

    it('never falls back when the gateway says the answer has started', async () => {
      const { names } = await run(
        chain,
        { a: [{ status: 500 }], b: [{}], c: [{}] },
        { isCommitted: () => true },
      );
      expect(names()).toEqual(['a']);
    });
  });

  describe('loadbalance', () => {
    it('splits 2,000 requests within 3% of the weights (seeded)', async () => {
      const config = validateConfig({
        strategy: { mode: 'loadbalance' },
        targets: [
          target('a', { weight: 0.7 }),
          target('b', { weight: 0.2 }),
          target('c', { weight: 0.1 }),
          target('d', { weight: 0 }),
        ],
      });
      const fake = fakeTargets({ a: [{}], b: [{}], c: [{}], d: [{}] });
      const random = seeded(42);
      for (let i = 0; i < 2000; i += 1) await executeConfig(config, {}, fake.attempt, { random });
      const share = (name: string) => fake.names().filter((n) => n === name).length / 2000;
      expect(Math.abs(share('a') - 0.7)).toBeLessThan(0.03);
      expect(Math.abs(share('b') - 0.2)).toBeLessThan(0.03);
      expect(Math.abs(share('c') - 0.1)).toBeLessThan(0.03);
      expect(share('d')).toBe(0);
    });

    it('picks by the draw: the boundaries of each share', async () => {
      const config = {
        strategy: { mode: 'loadbalance' },
        targets: [target('a', { weight: 3 }), target('b')],
      };
      expect((await run(config, { a: [{}], b: [{}] }, {}, { random: () => 0.74 })).names()).toEqual(['a']);
      expect((await run(config, { a: [{}], b: [{}] }, {}, { random: () => 0.76 })).names()).toEqual(['b']);
    });

    it('calls one target only, even when it fails', async () => {
      const config = { strategy: { mode: 'loadbalance' }, targets: [target('a'), target('b')] };
      const { names, result } = await run(config, { a: [{ status: 500 }], b: [{}] }, {}, { random: () => 0 });
      expect(names()).toEqual(['a']);
      expect(result.ok).toBe(false);
    });
  });

  describe('conditional', () => {
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.plan': { $eq: 'paid' } }, then: 'smart' },
          {
            query: { $and: [{ 'params.temperature': { $gt: 0.8 } }, { route: 'chat.completions' }] },
            then: 'creative',
          },
        ],
        default: 'cheap',
      },
      targets: [target('smart'), target('creative'), target('cheap')],
    };
    const scripts = { smart: [{}], creative: [{}], cheap: [{}] };

    it('routes on metadata', async () => {
      const { names, result } = await run(config, scripts, { metadata: { plan: 'paid' } });
      expect(names()).toEqual(['smart']);
      expect(result.servedBy).toBe('targets[0]');
    });

    it('routes on params and the route', async () => {
      const request = { body: { temperature: 0.9 }, route: 'chat.completions', metadata: { plan: 'free' } };
      expect((await run(config, scripts, request)).names()).toEqual(['creative']);
      expect((await run(config, scripts, { ...request, route: 'completions' })).names()).toEqual(['cheap']);
    });

    it('uses the default when no rule holds', async () => {
      expect((await run(config, scripts, {})).names()).toEqual(['cheap']);
    });
  });

  describe('nesting', () => {
    it('runs strategies inside strategies and reports the full index path', async () => {
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          {
            strategy: { mode: 'loadbalance' },
            targets: [
              target('a', { weight: 1 }),
              { strategy: { mode: 'fallback' }, targets: [target('b'), target('c')] },
            ],
          },
          target('d'),
        ],
      };
      const { result, names } = await run(
        config,
        { a: [{}], b: [{ status: 500 }], c: [{ status: 200 }], d: [{}] },
        {},
        { random: () => 0.99 },
      );
      expect(names()).toEqual(['b', 'c']);
      expect(result.servedBy).toBe('targets[0].targets[1].targets[1]');
    });

    it('falls back from a failed nested strategy to the next target', async () => {
      const config = {
        strategy: { mode: 'fallback' },
        targets: [{ strategy: { mode: 'fallback' }, targets: [target('a'), target('b')] }, target('c')],
      };
      const { result, names } = await run(config, { a: [{ status: 500 }], b: [{ status: 500 }], c: [{}] });
      expect(names()).toEqual(['a', 'b', 'c']);
      expect(result.servedBy).toBe('targets[1]');
    });

    it('lists every leaf target of a tree', () => {
      const config = validateConfig({
        strategy: { mode: 'fallback' },
        targets: [{ strategy: { mode: 'fallback' }, targets: [target('a'), target('b')] }, target('c')],
      });
      expect(leafTargets(config).map((leaf) => leaf.path)).toEqual([
        'targets[0].targets[0]',
        'targets[0].targets[1]',
        'targets[1]',
      ]);
    });
  });

  describe('retries', () => {
    it('retries the listed statuses, honouring Retry-After', async () => {
      const sleeps: number[] = [];
      const { result, names } = await run(
        { ...target('a'), retry: { attempts: 3 } },
        { a: [{ status: 429, retryAfterMs: 1500 }, { status: 503, retryAfterMs: 20 }, { status: 200 }] },
        {},
        { sleep: async (ms) => void sleeps.push(ms) },
      );
      expect(names()).toEqual(['a', 'a', 'a']);
      expect(sleeps).toEqual([1500, 20]);
      expect(result).toMatchObject({ ok: true, retryCount: 2 });
      expect(result.attempts.map((attempt) => attempt.retry)).toEqual([0, 1, 2]);
    });

    it('backs off exponentially without Retry-After', async () => {
      const sleeps: number[] = [];
      await run(
        { ...target('a'), retry: { attempts: 4 } },
        { a: [{ status: 500 }] },
        {},
        { sleep: async (ms) => void sleeps.push(ms), random: () => 1, backoffBaseMs: 100, backoffMaxMs: 500 },
      );
      expect(sleeps).toEqual([100, 200, 400, 500]);
    });

    it('ignores Retry-After when use_retry_after_header is false', async () => {
      const sleeps: number[] = [];
      await run(
        { ...target('a'), retry: { attempts: 1, use_retry_after_header: false } },
        { a: [{ status: 429, retryAfterMs: 9000 }, { status: 200 }] },
        {},
        { sleep: async (ms) => void sleeps.push(ms), random: () => 0, backoffBaseMs: 100 },
      );
      expect(sleeps).toEqual([50]);
    });

    it('answers at once when Retry-After asks for more than the cap', async () => {
      const { names, result } = await run(
        { ...target('a'), retry: { attempts: 3 } },
        { a: [{ status: 429, retryAfterMs: 120_000 }] },
        {},
        { ...noSleep, retryAfterCapMs: 60_000 },
      );
      expect(names()).toEqual(['a']);
      expect(result.outcome.status).toBe(429);
    });

    it('does not retry statuses outside on_status_codes', async () => {
      const custom = await run(
        { ...target('a'), retry: { attempts: 3, on_status_codes: [408] } },
        { a: [{ status: 500 }] },
      );
      expect(custom.names()).toEqual(['a']);
      const client = await run({ ...target('a'), retry: { attempts: 3 } }, { a: [{ status: 400 }] });
      expect(client.names()).toEqual(['a']);
    });

    it('really waits for a short Retry-After', async () => {
      const started = Date.now();
      const { result } = await run(
        { ...target('a'), retry: { attempts: 1 } },
        { a: [{ status: 429, retryAfterMs: 40 }, { status: 200 }] },
        {},
        {},
      );
      expect(result.retryCount).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    });

    it('inherits retry from the parent and lets a target override it', async () => {
      const config = {
        retry: { attempts: 2 },
        strategy: { mode: 'fallback' },
        targets: [target('a'), target('b', { retry: { attempts: 0 } })],
      };
      const { names } = await run(config, { a: [{ status: 500 }], b: [{ status: 500 }] });
      expect(names()).toEqual(['a', 'a', 'a', 'b']);
    });

    it('retries then falls back, reporting the retries of the target that served', async () => {
      const config = {
        strategy: { mode: 'fallback' },
        targets: [target('a', { retry: { attempts: 1 } }), target('b')],
      };
      const { result, names } = await run(config, { a: [{ status: 503 }], b: [{}] });
      expect(names()).toEqual(['a', 'a', 'b']);
      expect(result).toMatchObject({ servedBy: 'targets[1]', retryCount: 0 });
      expect(result.attempts).toHaveLength(3);
    });
  });

  describe('request_timeout', () => {
    it('ends a slow attempt with 408 and aborts its signal', async () => {
      const { result, calls } = await run({ ...target('a'), request_timeout: 30 }, { a: ['hang'] }, {}, {});
      expect(result.outcome).toMatchObject({ status: 408, timedOut: true });
      expect(result.outcome.error).toBeInstanceOf(AppError);
      expect((result.outcome.error as AppError).code).toBe('request_timeout');
      expect(calls[0].context.signal.aborted).toBe(true);
      expect(result.attempts[0]).toMatchObject({ status: 408, timedOut: true });
    });

    it('falls back after a timeout', async () => {
      const config = {
        strategy: { mode: 'fallback' },
        request_timeout: 30,
        targets: [target('a'), target('b')],
      };
      const { result, names } = await run(config, { a: ['hang'], b: [{}] }, {}, {});
      expect(names()).toEqual(['a', 'b']);
      expect(result).toMatchObject({ ok: true, servedBy: 'targets[1]' });
    });

    it('no longer applies once the answer has started', async () => {
      let committed = false;
      const fake = async (_target: LeafTarget, context: AttemptContext): Promise<AttemptOutcome<string>> => {
        committed = true;
        await new Promise((resolve) => setTimeout(resolve, 60));
        return { status: 200, committed: true, result: String(context.signal.aborted) };
      };
      const result = await executeConfig(
        validateConfig({ ...target('a'), request_timeout: 20 }),
        { isCommitted: () => committed },
        fake,
      );
      expect(result.outcome).toMatchObject({ status: 200, result: 'false' });
    });
  });

  describe('params and headers', () => {
    it('applies default, override and drop params per target, inheriting from the parent', async () => {
      const config = {
        override_params: { temperature: 0 },
        default_params: { max_tokens: 50 },
        drop_params: ['user'],
        strategy: { mode: 'fallback' },
        targets: [
          target('a', { override_params: { model: 'gpt-4o' } }),
          target('b', {
            override_params: { temperature: 1 },
            default_params: { max_tokens: 10 },
            drop_params: ['seed'],
          }),
        ],
      };
      const body = { model: 'x', temperature: 0.5, user: 'u', seed: 1, max_tokens: 7 };
      const { calls } = await run(config, { a: [{ status: 500 }], b: [{}] }, { body });
      expect(calls[0].context.body).toEqual({ model: 'gpt-4o', temperature: 0, seed: 1, max_tokens: 7 });
      expect(calls[1].context.body).toEqual({ model: 'x', temperature: 1, max_tokens: 7 });
      expect(body).toEqual({ model: 'x', temperature: 0.5, user: 'u', seed: 1, max_tokens: 7 });
    });

    it('sets defaults only where the body has none', () => {
      expect(applyParams({ a: 1 }, { defaultParams: { a: 2, b: 3 } })).toEqual({ a: 1, b: 3 });
      expect(applyParams(undefined, { overrideParams: { a: 1 } })).toBeUndefined();
    });

    it('forwards the listed request headers', async () => {
      const { calls } = await run(
        { ...target('a'), forward_headers: ['x-tenant', 'x-absent'] },
        { a: [{}] },
        { headers: { 'x-tenant': 't1', 'x-other': 'no', authorization: 'secret' } },
      );
      expect(calls[0].context.forwardHeaders).toEqual({ 'x-tenant': 't1' });
    });

    it('passes credentials down, except to a target that names its own provider', async () => {
      const config = {
        provider: 'openai',
        api_key: 'parent-key',
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'inherits', override_params: { model: 'a' } },
          { name: 'own', provider: 'anthropic' },
        ],
      };
      const { calls } = await run(config, { inherits: [{ status: 500 }], own: [{}] });
      expect(calls[0].target).toMatchObject({ provider: 'openai', credentials: { apiKey: 'parent-key' } });
      expect(calls[1].target.provider).toBe('anthropic');
      expect(calls[1].target.credentials).toEqual({});
    });
  });

  describe('circuit breaker', () => {
    const cb = { failure_threshold: 2, cooldown_interval: 1000 };
    const config = validateConfig({
      strategy: { mode: 'fallback', cb_config: cb },
      targets: [target('a'), target('b')],
    });

    function harness(scripts: Record<string, Step[]>) {
      let clock = 10_000;
      const breakers = new MemoryBreakerStore();
      const fake = fakeTargets(scripts);
      const send = () =>
        executeConfig(config, { scope: 'ws:cfg' }, fake.attempt, { breakers, now: () => clock, ...noSleep });
      return { fake, breakers, send, advance: (ms: number) => (clock += ms) };
    }

    it('opens after the threshold, skips the target, and closes after the cooldown', async () => {
      const h = harness({ a: [{ status: 500 }, { status: 500 }, { status: 200 }], b: [{}] });
      await h.send();
      await h.send();
      expect(h.fake.names()).toEqual(['a', 'b', 'a', 'b']);
      const skipped = await h.send();
      expect(h.fake.names()).toEqual(['a', 'b', 'a', 'b', 'b']);
      expect(skipped.attempts[0]).toMatchObject({ path: 'targets[0]', skipped: 'circuit_open' });
      expect(skipped.servedBy).toBe('targets[1]');

      h.advance(1000); // cooldown over: half-open, the next request tries the target again
      const probe = await h.send();
      expect(probe.servedBy).toBe('targets[0]');
      expect(await h.breakers.inspect('ws:cfg:targets[0]')).toEqual({
        failures: 0,
        total: 0,
        windowStart: 0,
        openUntil: 0,
      });
      await h.send();
      expect(h.fake.names().slice(-2)).toEqual(['a', 'a']);
    });

    it('opens again when the half-open probe fails', async () => {
      const h = harness({ a: [{ status: 500 }], b: [{}] });
      await h.send();
      await h.send();
      h.advance(1000);
      await h.send(); // the probe fails
      const before = h.fake.names().length;
      await h.send();
      expect(h.fake.names().slice(before)).toEqual(['b']);
    });

    it('is bypassed when every target is open', async () => {
      const h = harness({ a: [{ status: 500 }], b: [{ status: 500 }] });
      await h.send();
      await h.send();
      const before = h.fake.names().length;
      await h.send();
      expect(h.fake.names().slice(before)).toEqual(['a', 'b']);
    });

    it('counts only the configured failure statuses', async () => {
      const custom = validateConfig({
        strategy: { mode: 'fallback' },
        targets: [
          target('a', {
            cb_config: { failure_threshold: 1, cooldown_interval: 1000, failure_status_codes: [429] },
          }),
          target('b'),
        ],
      });
      const breakers = new MemoryBreakerStore();
      const fake = fakeTargets({ a: [{ status: 500 }, { status: 500 }, { status: 429 }, {}], b: [{}] });
      const send = () => executeConfig(custom, { scope: 's' }, fake.attempt, { breakers, ...noSleep });
      await send();
      await send();
      await send(); // 429 opens it
      await send();
      expect(fake.names()).toEqual(['a', 'b', 'a', 'b', 'a', 'b', 'b']);
    });

    it('reads as closed, and reports, when the breaker store fails', async () => {
      const errors: unknown[] = [];
      const broken = {
        openStates: async () => {
          throw new Error('redis down');
        },
        record: async () => {
          throw new Error('redis down');
        },
        inspect: async () => ({ failures: 0, total: 0, windowStart: 0, openUntil: 0 }),
      };
      const fake = fakeTargets({ a: [{ status: 500 }], b: [{}] });
      const result = await executeConfig(config, { scope: 's' }, fake.attempt, {
        breakers: broken,
        onError: (error) => errors.push(error),
      });
      expect(fake.names()).toEqual(['a', 'b']);
      expect(result.ok).toBe(true);
      expect(errors.length).toBeGreaterThanOrEqual(2);
    });

    it('opens on a failure percentage once minimum_requests were seen', async () => {
      const byRate = validateConfig({
        strategy: {
          mode: 'loadbalance',
          cb_config: { failure_threshold_percentage: 50, minimum_requests: 4, cooldown_interval: 1000 },
        },
        targets: [target('a', { weight: 1 }), target('b', { weight: 0.000001 })],
      });
      const breakers = new MemoryBreakerStore();
      const fake = fakeTargets({ a: [{}, { status: 500 }, {}, { status: 500 }, {}], b: [{}] });
      const send = () =>
        executeConfig(byRate, { scope: 's' }, fake.attempt, {
          breakers,
          random: () => 0,
          now: () => 5,
          ...noSleep,
        });
      for (let i = 0; i < 5; i += 1) await send();
      // 2 failures in 4 requests = 50%: the fifth request goes to b.
      expect(fake.names()).toEqual(['a', 'a', 'a', 'a', 'b']);
    });
  });

  describe('the client going away', () => {
    it('stops retrying and reports the request as aborted', async () => {
      const controller = new AbortController();
      const fake = fakeTargets({ a: [{ status: 503 }] });
      const result = await executeConfig(
        validateConfig({ ...target('a'), retry: { attempts: 5 } }),
        { signal: controller.signal },
        fake.attempt,
        { sleep: async () => controller.abort() },
      );
      expect(fake.names()).toEqual(['a']);
      expect(result).toMatchObject({ aborted: true, ok: false });
    });

    it('aborts the attempt in flight', async () => {
      const controller = new AbortController();
      const fake = fakeTargets({ a: ['hang'] });
      setTimeout(() => controller.abort(), 20);
      const result = await executeConfig(
        validateConfig({ strategy: { mode: 'fallback' }, targets: [target('a'), target('b')] }),
        { signal: controller.signal },
        fake.attempt,
      );
      expect(fake.names()).toEqual(['a']);
      expect(fake.calls[0].context.signal.aborted).toBe(true);
      expect(result.aborted).toBe(true);
    });
  });

  describe('retryAfterMs', () => {
    it('reads retry-after-ms, seconds and HTTP dates', () => {
      expect(retryAfterMs({ 'retry-after-ms': '250' })).toBe(250);
      expect(retryAfterMs({ 'retry-after': '2' })).toBe(2000);
      expect(retryAfterMs({ 'retry-after': '0.5' })).toBe(500);
      const now = Date.parse('2026-01-01T00:00:00Z');
      expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now)).toBe(3000);
      expect(retryAfterMs({ 'retry-after': 'soon' })).toBeNull();
      expect(retryAfterMs({})).toBeNull();
    });
  });
});
