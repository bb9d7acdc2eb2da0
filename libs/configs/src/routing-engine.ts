import type { ProviderCredentials } from '@switchboard/providers';
import { BreakerStore, isBreakerFailure } from './circuit-breaker';
import { matchesQuery } from './conditions';
import {
  CREDENTIAL_FIELDS,
  CircuitBreakerSettings,
  ConditionRule,
  ConfigNode,
  CredentialField,
  GatewayConfig,
  RetrySettings,
  StrategyMode,
} from './config.types';
import { ConfigErrors } from './configs.errors';

/**
 * The routing engine: pure, framework-free. Given a validated config, the request and an
 * `attempt` callback that makes one provider call, it walks the strategy tree (single, fallback,
 * loadbalance, conditional, nested to any depth), retries, enforces request timeouts, skips
 * targets whose circuit is open, and reports which target served, how many retries it took,
 * and every attempt made.
 *
 * Inheritance, parent to target: `retry`, `request_timeout`, `forward_headers`,
 * `strict_open_ai_compliance` and the circuit breaker pass down unless the target sets its own;
 * `override_params` and `default_params` merge (the target's keys win); `drop_params` add up.
 * Provider and credentials pass down as one group: a target that names its own `provider` or
 * `virtual_key` inherits none of its parent's credentials, so a key is never sent to another
 * provider.
 */

export const DEFAULT_RETRY_STATUS_CODES: readonly number[] = [429, 500, 502, 503, 504];

/** One provider to call, with everything the config says about it. */
export interface LeafTarget {
  /** Index path in the config: `targets[1].targets[0]`; '' for a config without targets. */
  path: string;
  name?: string;
  /** A provider id or `@slug`; absent when the config leaves the provider to the request headers. */
  provider?: string;
  virtualKey?: string;
  /** From `api_key`, `custom_host`, `azure_*`, `aws_*`, `vertex_*`, `anthropic_*`, `openai_*`. */
  credentials: ProviderCredentials;
  retry?: RetrySettings;
  requestTimeout?: number;
  strictOpenAiCompliance?: boolean;
  circuitBreaker?: CircuitBreakerSettings;
  overrideParams?: Record<string, unknown>;
  defaultParams?: Record<string, unknown>;
  dropParams?: string[];
  forwardHeaders?: string[];
  /** Guardrail and hook fields of the leaf, untouched (for the guardrails area). */
  extras: Pick<
    ConfigNode,
    'input_guardrails' | 'output_guardrails' | 'before_request_hooks' | 'after_request_hooks'
  >;
}

/** What one call to a provider came to. */
export interface AttemptOutcome<R = unknown> {
  /** HTTP status of the answer, or the status the failure maps to (502 unreachable, 408 timeout). */
  status: number;
  /** True once any byte reached the client: nothing may be retried or replaced after that. */
  committed?: boolean;
  /** The upstream's Retry-After, in milliseconds (see retryAfterMs()). */
  retryAfterMs?: number | null;
  /** The failure, when there was one (an AppError is sent to the client as is). */
  error?: unknown;
  /** Whatever the gateway needs to finish the answer (the upstream response, a buffered body). */
  result?: R;
  /** Set by the engine when the request_timeout ended the attempt. */
  timedOut?: boolean;
}

export interface AttemptContext {
  /** The body for this target: the request body with default, override and drop params applied. */
  body: Record<string, unknown> | undefined;
  /** The request headers the config forwards (lower-case names). */
  forwardHeaders: Record<string, string>;
  /** Aborted when the request_timeout passes or the client hangs up: hand it to the upstream call. */
  signal: AbortSignal;
  /** 0 for the first try of this target, then 1, 2, … for its retries. */
  retry: number;
  /** Attempts already made in this request, over all targets. */
  previousAttempts: number;
}

export type AttemptFn<R> = (target: LeafTarget, context: AttemptContext) => Promise<AttemptOutcome<R>>;

export interface RoutingRequest {
  /** Gateway route (`chat.completions`) for conditions on `route`. */
  route?: string;
  /** Request path for conditions on `url.pathname`. */
  path?: string;
  /** Parsed JSON body; undefined for multipart and passthrough requests (params are then not applied). */
  body?: Record<string, unknown>;
  metadata?: Record<string, unknown> | null;
  headers?: Record<string, string | string[] | undefined>;
  /** The client's hang-up: stops retries and fallbacks, and aborts the attempt in flight. */
  signal?: AbortSignal;
  /** True once bytes went to the client (e.g. `() => reply.raw.headersSent`). */
  isCommitted?: () => boolean;
  /** Prefix of circuit-breaker keys: the workspace and config identity. */
  scope?: string;
}

export interface AttemptRecord {
  path: string;
  provider: string | null;
  retry: number;
  status: number | null;
  durationMs: number;
  timedOut?: boolean;
  error?: string;
  retryAfterMs?: number | null;
  /** The target was not called: its circuit was open. */
  skipped?: 'circuit_open';
}

export interface RoutingResult<R = unknown> {
  /** The final outcome: the success, or the last failure to report. */
  outcome: AttemptOutcome<R>;
  ok: boolean;
  /** The target that produced the final outcome (null when the client left before any call). */
  target: LeafTarget | null;
  /** Its index path (for the target-index header). */
  servedBy: string | null;
  /** Retries made on that target. */
  retryCount: number;
  attempts: AttemptRecord[];
  /** The client hung up: nobody reads an answer. */
  aborted: boolean;
}

export interface EngineOptions {
  /** Random numbers in [0, 1) for loadbalance and backoff jitter; injectable for tests. */
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  breakers?: BreakerStore | null;
  /** A Retry-After longer than this is not waited for: the failure is returned instead. */
  retryAfterCapMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Breaker store problems (Redis down) are reported here and otherwise ignored. */
  onError?: (error: unknown) => void;
}

export const ENGINE_DEFAULTS = {
  retryAfterCapMs: 30_000,
  backoffBaseMs: 200,
  backoffMaxMs: 5_000,
};

// ---------------------------------------------------------------------------------------------
// Compilation: a config tree with inheritance resolved, cached per config object.

interface CompiledBase {
  path: string;
  name?: string;
  weight: number;
}
interface CompiledLeaf extends CompiledBase {
  kind: 'leaf';
  target: LeafTarget;
}
interface CompiledStrategy extends CompiledBase {
  kind: 'strategy';
  mode: StrategyMode;
  onStatusCodes?: number[];
  conditions?: ConditionRule[];
  defaultTarget?: string;
  children: CompiledNode[];
  byName: Map<string, CompiledNode>;
}
type CompiledNode = CompiledLeaf | CompiledStrategy;

interface Inherited {
  credentials: Partial<Record<CredentialField | 'provider' | 'virtual_key', string>>;
  retry?: RetrySettings;
  requestTimeout?: number;
  strict?: boolean;
  forwardHeaders?: string[];
  circuitBreaker?: CircuitBreakerSettings;
  overrideParams?: Record<string, unknown>;
  defaultParams?: Record<string, unknown>;
  dropParams?: string[];
}

const CREDENTIAL_KEYS = Object.keys(CREDENTIAL_FIELDS) as CredentialField[];
const compiled = new WeakMap<GatewayConfig, CompiledNode>();

function merge(
  parent: Record<string, unknown> | undefined,
  own: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!parent) return own;
  if (!own) return parent;
  return { ...parent, ...own };
}

function inherit(parent: Inherited, node: ConfigNode): Inherited {
  const ownsProvider = node.provider !== undefined || node.virtual_key !== undefined;
  const credentials: Inherited['credentials'] = ownsProvider ? {} : { ...parent.credentials };
  if (node.provider !== undefined) credentials.provider = node.provider;
  if (node.virtual_key !== undefined) credentials.virtual_key = node.virtual_key;
  for (const key of CREDENTIAL_KEYS) if (node[key] !== undefined) credentials[key] = node[key];
  const drop = [...(parent.dropParams ?? []), ...(node.drop_params ?? [])];
  return {
    credentials,
    retry: node.retry ?? parent.retry,
    requestTimeout: node.request_timeout ?? parent.requestTimeout,
    strict: node.strict_open_ai_compliance ?? parent.strict,
    forwardHeaders: node.forward_headers ?? parent.forwardHeaders,
    circuitBreaker: node.cb_config ?? parent.circuitBreaker,
    overrideParams: merge(parent.overrideParams, node.override_params),
    defaultParams: merge(parent.defaultParams, node.default_params),
    dropParams: drop.length > 0 ? [...new Set(drop)] : undefined,
  };
}

function compileNode(node: ConfigNode, path: string, parent: Inherited): CompiledNode {
  const settings = inherit(parent, node);
  const base = { path, name: node.name, weight: node.weight ?? 1 };
  if (!node.targets) {
    const credentials: ProviderCredentials = {};
    for (const key of CREDENTIAL_KEYS) {
      const value = settings.credentials[key];
      if (value !== undefined) credentials[CREDENTIAL_FIELDS[key]] = value;
    }
    const target: LeafTarget = {
      path,
      name: node.name,
      provider: settings.credentials.provider,
      virtualKey: settings.credentials.virtual_key,
      credentials,
      retry: settings.retry,
      requestTimeout: settings.requestTimeout,
      strictOpenAiCompliance: settings.strict,
      circuitBreaker: settings.circuitBreaker,
      overrideParams: settings.overrideParams,
      defaultParams: settings.defaultParams,
      dropParams: settings.dropParams,
      forwardHeaders: settings.forwardHeaders,
      extras: {
        input_guardrails: node.input_guardrails,
        output_guardrails: node.output_guardrails,
        before_request_hooks: node.before_request_hooks,
        after_request_hooks: node.after_request_hooks,
      },
    };
    return { ...base, kind: 'leaf', target };
  }
  // A strategy's cb_config covers its targets (the reference's placement); a node's own cb_config too.
  const forChildren: Inherited = {
    ...settings,
    circuitBreaker: node.strategy?.cb_config ?? settings.circuitBreaker,
  };
  const children = node.targets.map((child, i) =>
    compileNode(child, `${path ? `${path}.` : ''}targets[${i}]`, forChildren),
  );
  const byName = new Map<string, CompiledNode>();
  for (const child of children) if (child.name !== undefined) byName.set(child.name, child);
  return {
    ...base,
    kind: 'strategy',
    mode: node.strategy?.mode ?? 'single',
    onStatusCodes: node.strategy?.on_status_codes,
    conditions: node.strategy?.conditions,
    defaultTarget: node.strategy?.default,
    children,
    byName,
  };
}

function compile(config: GatewayConfig): CompiledNode {
  let tree = compiled.get(config);
  if (!tree) {
    tree = compileNode(config, '', { credentials: {} });
    compiled.set(config, tree);
  }
  return tree;
}

/** Every provider call a config can make, in tree order (for checks and documentation). */
export function leafTargets(config: GatewayConfig): LeafTarget[] {
  const leaves: LeafTarget[] = [];
  const walk = (node: CompiledNode) => {
    if (node.kind === 'leaf') leaves.push(node.target);
    else node.children.forEach(walk);
  };
  walk(compile(config));
  return leaves;
}

// ---------------------------------------------------------------------------------------------
// Helpers for the gateway.

/**
 * Milliseconds the upstream asks us to wait: `retry-after-ms` (OpenAI), else `retry-after` in
 * seconds or as an HTTP date. Null when absent or unreadable.
 */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | null {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const precise = first(headers['retry-after-ms']);
  if (precise !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(precise)) return Math.ceil(Number(precise));
  const value = first(headers['retry-after']);
  if (value === undefined) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The body a target receives: defaults where absent, then overrides, then drops. */
export function applyParams(
  body: Record<string, unknown> | undefined,
  target: Pick<LeafTarget, 'defaultParams' | 'overrideParams' | 'dropParams'>,
): Record<string, unknown> | undefined {
  if (!body) return undefined;
  const result: Record<string, unknown> = { ...body };
  if (target.defaultParams)
    for (const [key, value] of Object.entries(target.defaultParams))
      if (!(key in result)) result[key] = value;
  if (target.overrideParams) Object.assign(result, target.overrideParams);
  if (target.dropParams) for (const key of target.dropParams) delete result[key];
  return result;
}

function pickHeaders(
  headers: RoutingRequest['headers'],
  names: string[] | undefined,
): Record<string, string> {
  const picked: Record<string, string> = {};
  if (!headers || !names) return picked;
  for (const name of names) {
    const value = headers[name];
    if (value === undefined) continue;
    picked[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return picked;
}

function succeeded(outcome: AttemptOutcome): boolean {
  return outcome.status >= 200 && outcome.status < 400 && outcome.error === undefined;
}

function describe(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (error instanceof Error) return error.message;
  return String(error);
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------
// Execution.

interface NodeResult<R> {
  outcome: AttemptOutcome<R>;
  target: LeafTarget | null;
  retryCount: number;
}

const TIMEOUT = Symbol('timeout');

class Run<R> {
  readonly attempts: AttemptRecord[] = [];
  aborted = false;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(
    private readonly request: RoutingRequest,
    private readonly attempt: AttemptFn<R>,
    private readonly options: EngineOptions,
  ) {
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
  }

  private clientGone(): boolean {
    if (this.request.signal?.aborted) this.aborted = true;
    return this.aborted;
  }

  private committed(outcome: AttemptOutcome): boolean {
    return outcome.committed === true || this.request.isCommitted?.() === true;
  }

  private abortedResult(target: LeafTarget | null, retryCount: number): NodeResult<R> {
    return {
      outcome: {
        status: 499,
        error: this.request.signal?.reason ?? new Error('The client closed the request'),
      },
      target,
      retryCount,
    };
  }

  async node(node: CompiledNode): Promise<NodeResult<R>> {
    if (node.kind === 'leaf') return this.leaf(node.target);
    switch (node.mode) {
      case 'single':
        return this.node(node.children[0]);
      case 'conditional':
        return this.node(this.choose(node));
      case 'loadbalance':
        return this.loadbalance(node);
      case 'fallback':
        return this.fallback(node);
    }
  }

  private choose(node: CompiledStrategy): CompiledNode {
    const input = {
      metadata: this.request.metadata,
      params: this.request.body,
      route: this.request.route,
      path: this.request.path,
    };
    const rule = node.conditions!.find((candidate) => matchesQuery(candidate.query, input));
    return node.byName.get(rule ? rule.then : node.defaultTarget!)!;
  }

  /** Children whose circuit is not open; all of them when every circuit is open (bypass). */
  private async healthy(children: CompiledNode[]): Promise<CompiledNode[]> {
    const breakers = this.options.breakers;
    if (!breakers) return children;
    const guarded = children.filter(
      (child): child is CompiledLeaf => child.kind === 'leaf' && child.target.circuitBreaker !== undefined,
    );
    if (guarded.length === 0) return children;
    let open: boolean[];
    try {
      open = await breakers.openStates(
        guarded.map((child) => this.breakerKey(child.target)),
        this.now(),
      );
    } catch (error) {
      this.options.onError?.(error);
      return children;
    }
    const skipped = new Set(guarded.filter((_, i) => open[i]));
    if (skipped.size === 0) return children;
    const remaining = children.filter((child) => !skipped.has(child as CompiledLeaf));
    if (remaining.length === 0) return children;
    for (const child of skipped) {
      this.attempts.push({
        path: child.path,
        provider: child.target.provider ?? null,
        retry: 0,
        status: null,
        durationMs: 0,
        skipped: 'circuit_open',
      });
    }
    return remaining;
  }

  private async fallback(node: CompiledStrategy): Promise<NodeResult<R>> {
    const candidates = await this.healthy(node.children);
    let last: NodeResult<R> | null = null;
    for (const child of candidates) {
      if (this.clientGone()) return last ?? this.abortedResult(null, 0);
      last = await this.node(child);
      const { outcome } = last;
      if (this.aborted || succeeded(outcome) || this.committed(outcome)) return last;
      if (node.onStatusCodes && !node.onStatusCodes.includes(outcome.status)) return last;
    }
    return last!;
  }

  private async loadbalance(node: CompiledStrategy): Promise<NodeResult<R>> {
    const weighted = node.children.filter((child) => child.weight > 0);
    const candidates = await this.healthy(weighted);
    const total = candidates.reduce((sum, child) => sum + child.weight, 0);
    let point = this.random() * total;
    for (const child of candidates) {
      point -= child.weight;
      if (point < 0) return this.node(child);
    }
    return this.node(candidates[candidates.length - 1]);
  }

  private breakerKey(target: LeafTarget): string {
    return `${this.request.scope ?? 'config'}:${target.path || 'root'}`;
  }

  private async leaf(target: LeafTarget): Promise<NodeResult<R>> {
    const retries = target.retry?.attempts ?? 0;
    const retryOn = target.retry?.on_status_codes ?? DEFAULT_RETRY_STATUS_CODES;
    const honourRetryAfter = target.retry?.use_retry_after_header !== false;
    for (let retry = 0; ; retry += 1) {
      if (this.clientGone()) return this.abortedResult(target, retry);
      const outcome = await this.once(target, retry);
      if (this.aborted) return { outcome, target, retryCount: retry };
      if (target.circuitBreaker) await this.recordBreaker(target, target.circuitBreaker, outcome);
      const done =
        succeeded(outcome) ||
        this.committed(outcome) ||
        retry >= retries ||
        !retryOn.includes(outcome.status);
      if (done) return { outcome, target, retryCount: retry };
      let delay: number;
      if (honourRetryAfter && typeof outcome.retryAfterMs === 'number') {
        const cap = this.options.retryAfterCapMs ?? ENGINE_DEFAULTS.retryAfterCapMs;
        // Asked to wait longer than we are willing to hold the request: answer now instead.
        if (outcome.retryAfterMs > cap) return { outcome, target, retryCount: retry };
        delay = outcome.retryAfterMs;
      } else {
        const base = this.options.backoffBaseMs ?? ENGINE_DEFAULTS.backoffBaseMs;
        const max = this.options.backoffMaxMs ?? ENGINE_DEFAULTS.backoffMaxMs;
        const exponential = Math.min(max, base * 2 ** retry);
        delay = Math.round(exponential / 2 + (this.random() * exponential) / 2);
      }
      await this.sleep(delay, this.request.signal);
    }
  }

  private async recordBreaker(
    target: LeafTarget,
    settings: CircuitBreakerSettings,
    outcome: AttemptOutcome,
  ): Promise<void> {
    try {
      await this.options.breakers?.record(
        this.breakerKey(target),
        settings,
        isBreakerFailure(outcome, settings),
        this.now(),
      );
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  private async once(target: LeafTarget, retry: number): Promise<AttemptOutcome<R>> {
    const controller = new AbortController();
    const clientSignal = this.request.signal;
    // Kept for the life of the request: a stream relayed after the engine returns still stops
    // when the client leaves.
    const onClientAbort = () => controller.abort(clientSignal?.reason);
    clientSignal?.addEventListener('abort', onClientAbort, { once: true });
    const context: AttemptContext = {
      body: applyParams(this.request.body, target),
      forwardHeaders: pickHeaders(this.request.headers, target.forwardHeaders),
      signal: controller.signal,
      retry,
      previousAttempts: this.attempts.filter((record) => !record.skipped).length,
    };
    const started = this.now();
    const call = Promise.resolve()
      .then(() => this.attempt(target, context))
      .then(
        (outcome) => outcome,
        (error: unknown): AttemptOutcome<R> => ({
          status:
            typeof (error as { status?: unknown })?.status === 'number'
              ? (error as { status: number }).status
              : 502,
          error,
        }),
      );

    let timer: NodeJS.Timeout | undefined;
    let raced: AttemptOutcome<R> | typeof TIMEOUT;
    const timeoutMs = target.requestTimeout;
    if (timeoutMs !== undefined) {
      const timeout = new Promise<typeof TIMEOUT>((resolve) => {
        timer = setTimeout(() => {
          // Once bytes reached the client the answer is under way: the timeout no longer applies.
          if (this.request.isCommitted?.()) return;
          controller.abort(ConfigErrors.requestTimeout(timeoutMs));
          resolve(TIMEOUT);
        }, timeoutMs);
      });
      raced = await Promise.race([call, timeout]);
      clearTimeout(timer);
    } else {
      raced = await call;
    }

    let outcome: AttemptOutcome<R>;
    if (raced === TIMEOUT) {
      outcome = { status: 408, error: ConfigErrors.requestTimeout(timeoutMs!), timedOut: true };
    } else {
      outcome = raced;
      if (clientSignal?.aborted) this.aborted = true;
    }
    if (!succeeded(outcome) && !this.committed(outcome))
      clientSignal?.removeEventListener('abort', onClientAbort);
    this.attempts.push({
      path: target.path,
      provider: target.provider ?? null,
      retry,
      status: outcome.status,
      durationMs: Math.max(0, this.now() - started),
      ...(outcome.timedOut ? { timedOut: true } : {}),
      ...(outcome.error !== undefined ? { error: describe(outcome.error) } : {}),
      ...(outcome.retryAfterMs != null ? { retryAfterMs: outcome.retryAfterMs } : {}),
    });
    return outcome;
  }
}

/**
 * Runs a validated config for one request. `attempt` makes one provider call for a target and
 * says how it went; it must not write a failed answer to the client (the engine may try again or
 * elsewhere), and it must report `committed: true` once any byte went out.
 */
export async function executeConfig<R>(
  config: GatewayConfig,
  request: RoutingRequest,
  attempt: AttemptFn<R>,
  options: EngineOptions = {},
): Promise<RoutingResult<R>> {
  const run = new Run<R>(request, attempt, options);
  const result = await run.node(compile(config));
  return {
    outcome: result.outcome,
    ok: !run.aborted && succeeded(result.outcome),
    target: result.target,
    servedBy: result.target ? result.target.path : null,
    retryCount: result.retryCount,
    attempts: run.attempts,
    aborted: run.aborted,
  };
}
