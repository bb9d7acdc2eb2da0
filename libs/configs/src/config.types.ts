/**
 * The gateway config object (fields of the reference's config schema, snake_case as clients send
 * them). A config is a node: either a leaf that names a provider, or a strategy over `targets`,
 * each of which is again a node, to any depth. Settings on a node are inherited by its targets
 * unless a target sets its own (see routing-engine.ts for the exact rules).
 */

export const STRATEGY_MODES = ['single', 'fallback', 'loadbalance', 'conditional'] as const;
export type StrategyMode = (typeof STRATEGY_MODES)[number];

export interface RetrySettings {
  /** Retries after the first attempt, 0 to 5. */
  attempts: number;
  /** Statuses that are retried; default 429, 500, 502, 503, 504. */
  on_status_codes?: number[];
  /** Wait as long as the upstream's Retry-After says (capped); default true. */
  use_retry_after_header?: boolean;
}

export interface CircuitBreakerSettings {
  /** Failures (in one window) that open the circuit. */
  failure_threshold?: number;
  /** Failure rate, in percent, that opens the circuit once `minimum_requests` were seen. */
  failure_threshold_percentage?: number;
  /** Requests needed before the failure rate counts; default 10. */
  minimum_requests?: number;
  /** Milliseconds the circuit stays open; also the length of the counting window. */
  cooldown_interval: number;
  /** Statuses that count as failures; default any status ≥ 500, timeouts and transport errors. */
  failure_status_codes?: number[];
}

export interface CacheSettings {
  mode: 'simple';
  /** Seconds a stored answer stays valid; default 7 days. */
  max_age?: number;
}

export type ConditionScalar = string | number | boolean | null;

export const CONDITION_OPERATORS = [
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$regex',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/** `{ "$eq": "paid" }`, or a bare value meaning `$eq`. Every operator given must hold. */
export type FieldCondition = ConditionScalar | Partial<Record<ConditionOperator, unknown>>;

/**
 * Field paths (`metadata.<key>`, `params.<dotted path>`, `route`, `url.pathname`) mapped to
 * conditions, all of which must hold; `$and` / `$or` combine nested queries.
 */
export interface ConditionQuery {
  $and?: ConditionQuery[];
  $or?: ConditionQuery[];
  [field: string]: FieldCondition | ConditionQuery[] | undefined;
}

export interface ConditionRule {
  query: ConditionQuery;
  /** Name of the target to use when the query holds. */
  then: string;
}

export interface StrategySettings {
  mode: StrategyMode;
  /** Fallback only: move to the next target only on these statuses (default: on any failure). */
  on_status_codes?: number[];
  /** Conditional only: rules tried in order. */
  conditions?: ConditionRule[];
  /** Conditional only: target name used when no rule holds. */
  default?: string;
  /** Circuit breaker for every target of this strategy (and below, unless they set their own). */
  cb_config?: CircuitBreakerSettings;
}

/** Config fields that become provider credentials; the names follow provider-resolution.ts. */
export const CREDENTIAL_FIELDS = {
  api_key: 'apiKey',
  custom_host: 'customHost',
  azure_resource_name: 'azureResourceName',
  azure_deployment_id: 'azureDeploymentId',
  azure_api_version: 'azureApiVersion',
  azure_entra_scope: 'azureEntraScope',
  aws_access_key_id: 'awsAccessKeyId',
  aws_secret_access_key: 'awsSecretAccessKey',
  aws_session_token: 'awsSessionToken',
  aws_region: 'awsRegion',
  vertex_project_id: 'vertexProjectId',
  vertex_region: 'vertexRegion',
  anthropic_beta: 'anthropicBeta',
  anthropic_version: 'anthropicVersion',
  openai_organization: 'openaiOrganization',
  openai_project: 'openaiProject',
} as const;
export type CredentialField = keyof typeof CREDENTIAL_FIELDS;

export type ConfigCredentials = Partial<Record<CredentialField, string>>;

export interface ConfigNode extends ConfigCredentials {
  /** Referenced by conditional rules; unique among siblings. */
  name?: string;
  /** Loadbalance share; default 1, 0 drains the target. */
  weight?: number;
  strategy?: StrategySettings;
  targets?: ConfigNode[];
  /** A provider id (`openai`, `anthropic`, …) or a stored provider `@slug`. */
  provider?: string;
  virtual_key?: string;
  retry?: RetrySettings;
  /** Milliseconds until the first byte; past it the attempt ends with 408. */
  request_timeout?: number;
  /** Body fields forced onto the request. */
  override_params?: Record<string, unknown>;
  /** Body fields set when the request does not have them. */
  default_params?: Record<string, unknown>;
  /** Body fields removed before the call. */
  drop_params?: string[];
  /** Request headers (lower-case names) passed on to the provider. */
  forward_headers?: string[];
  cb_config?: CircuitBreakerSettings;
  /** Top level only: the response cache is consulted before any routing. */
  cache?: CacheSettings;
  strict_open_ai_compliance?: boolean;
  /** Kept for the guardrails area; not interpreted by routing. */
  input_guardrails?: unknown[];
  output_guardrails?: unknown[];
  before_request_hooks?: unknown[];
  after_request_hooks?: unknown[];
}

export type GatewayConfig = ConfigNode;
