import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppError, InvalidationBus } from '@switchboard/common';
import type { ProviderCredentials } from '@switchboard/providers';
import { SecretCipher, SecretManagerType, SecretReferenceTarget, SecretResolver } from '@switchboard/secrets';
import { getModelPricing, resolvePricing, type ModelPricing, type PricingOverride } from './catalog';
import { IntegrationModelEntity } from './entities/integration-model.entity';
import { IntegrationWorkspaceEntity } from './entities/integration-workspace.entity';
import { IntegrationEntity, StoredSecretMapping } from './entities/integration.entity';
import { ProviderEntity, ProviderKind } from './entities/provider.entity';
import { SecretReferenceEntity } from './entities/secret-reference.entity';
import { adjustmentsToOverride, pricingConfigToOverride } from './pricing-overrides';
import {
  AzureDeployment,
  ServiceAccount,
  deploymentForModel,
  settingsToCredentials,
} from './provider-settings';
import { ProviderTokens, TokenRequest, tokenRequestFor } from './provider-tokens';
import { openSettings } from './sealed-settings';

export const PROVIDERS_TOPIC = 'integrations';
/** Safety net for a missed invalidation message; every write reloads at once. */
const REFRESH_INTERVAL_MS = 60_000;

export type ProviderRefusalReason =
  | 'expired'
  | 'disabled'
  | 'exhausted'
  | 'integration_archived'
  | 'integration_not_granted'
  | 'secret_not_allowed'
  | 'secret_unavailable'
  | 'token_unavailable'
  | 'model_not_allowed';

/** Why a stored provider cannot serve this request; the gateway maps it to its error. */
export interface ProviderRefusal {
  readonly refused: true;
  readonly reason: ProviderRefusalReason;
  /** Names the provider (and the model, reference or integration) and what to do. */
  readonly message: string;
  /** Suggested HTTP status: 401 expired, 403 not granted / not allowed, 429 exhausted, 502 manager down. */
  readonly status: number;
  readonly slug: string;
  readonly providerId: string;
}

/** Limits as stored (usage_limits object, rate_limits array), for the policies area. */
export interface ProviderLimits {
  readonly usageLimits: Readonly<Record<string, unknown>> | null;
  readonly rateLimits: readonly Readonly<Record<string, unknown>>[] | null;
}

export interface ProviderPricing {
  /** The integration's `pricing_adjustments` as a cost-function override, or null. */
  readonly adjustments: PricingOverride | null;
  /** Per-model `pricing_config` (custom models and priced catalog models), by model slug. */
  readonly models: Readonly<Record<string, PricingOverride>>;
}

/** A stored provider (or virtual key) ready to call. Shared and frozen: never mutate it. */
export interface ResolvedProvider {
  readonly refused: false;
  readonly kind: ProviderKind;
  readonly providerId: string;
  readonly slug: string;
  readonly name: string;
  readonly organisationId: string;
  readonly workspaceId: string;
  readonly integrationId: string | null;
  readonly integrationSlug: string | null;
  /** Canonical adapter id for getProviderAdapter. */
  readonly providerName: string;
  /** Credentials of the default deployment; see credentialsForModel for Azure deployments. */
  readonly credentials: Readonly<ProviderCredentials>;
  /** Extra headers to send upstream (`custom_headers`), or null. */
  readonly customHeaders: Readonly<Record<string, string>> | null;
  readonly azureDeployments: readonly AzureDeployment[] | null;
  /** null: every model is allowed (except deniedModels); else only these. */
  readonly allowedModels: readonly string[] | null;
  readonly deniedModels: readonly string[];
  readonly customModels: readonly string[];
  readonly pricing: ProviderPricing;
  readonly usageLimits: Readonly<Record<string, unknown>> | null;
  readonly rateLimits: readonly Readonly<Record<string, unknown>>[] | null;
  /** What the integration's grant to this workspace sets (its row, or global access). */
  readonly integrationLimits: ProviderLimits | null;
  readonly expiresAt: Date | null;
}

export type DirectoryLookup = ResolvedProvider | ProviderRefusal | null;

/** Models an integration allows, as computed from its model settings. */
export interface ModelRules {
  allowedModels: string[] | null;
  deniedModels: string[];
  customModels: string[];
  pricing: ProviderPricing;
}

interface IntegrationIndex {
  id: string;
  slug: string;
  status: 'active' | 'archived';
  workspaceId: string | null;
  providerName: string;
  settings: Record<string, unknown>;
  key: string | null;
  mappings: StoredSecretMapping[];
  rules: ModelRules;
  global: { enabled: boolean; limits: ProviderLimits } | null;
  grants: Map<string, { enabled: boolean; limits: ProviderLimits }>;
}

interface ReferenceIndex {
  target: SecretReferenceTarget;
  allowAll: boolean;
  allowed: ReadonlySet<string>;
  fingerprint: string;
}

interface Entry {
  row: ProviderEntity;
  integration: IntegrationIndex | null;
  /** Static refusal computed at load (disabled, not granted, archived integration). */
  refusal: ProviderRefusal | null;
  settings: Record<string, unknown>;
  key: string | null;
  /** Integration mappings first, then the row's own (which win). */
  mappings: { mapping: StoredSecretMapping; reference: ReferenceIndex | null }[];
  /** Ready answer when nothing must be read at run time. */
  ready: ResolvedProvider | null;
  /** The token its static settings need (none when secret mappings may change them). */
  tokenRequest: TokenRequest | null;
  integrationLimits: ProviderLimits | null;
}

interface Snapshot {
  byKey: Map<string, Entry>;
  byWorkspace: Map<string, Entry[]>;
  generation: number;
}

function entryKey(workspaceId: string, slug: string): string {
  return `${workspaceId}\u0000${slug}`;
}

function refusal(
  row: { id: string; slug: string },
  reason: ProviderRefusalReason,
  status: number,
  message: string,
): ProviderRefusal {
  return Object.freeze({
    refused: true as const,
    reason,
    status,
    message,
    slug: row.slug,
    providerId: row.id,
  });
}

function freezeDeep<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as Record<string, unknown>)) freezeDeep(inner);
  }
  return value;
}

/**
 * The gateway's warm-path index of stored providers and virtual keys. Loaded at start and after
 * every write (on every replica, through the InvalidationBus), it answers from memory: a warm
 * lookup reads no database and waits on no I/O. Only a cold secret-mapped credential (or a token
 * that must be minted) makes a lookup return a promise, which later lookups then skip.
 */
@Injectable()
export class ProviderDirectory implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ProviderDirectory.name);
  private snapshot: Snapshot = { byKey: new Map(), byWorkspace: new Map(), generation: 0 };
  private references = new Map<string, ReferenceIndex>();
  private current: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private lastRequested: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: (() => void)[] = [];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly resolver: SecretResolver,
    private readonly tokens: ProviderTokens,
    private readonly bus: InvalidationBus,
  ) {}

  onModuleInit(): void {
    this.bus.on(PROVIDERS_TOPIC, () => {
      this.lastRequested = this.reload();
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.reload(), REFRESH_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Increases with every load; caches built on the index key on it. */
  get generation(): number {
    return this.snapshot.generation;
  }

  /** Runs after every reload (ModelDirectory drops its lists). */
  onReload(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** After a committed write: every replica reloads; resolves when this one has. */
  changed(): Promise<void> {
    this.bus.publish(PROVIDERS_TOPIC);
    return this.lastRequested;
  }

  /** Reloads from the database; concurrent calls share loads, and a call during a load gets the next one. */
  reload(): Promise<void> {
    if (!this.current) {
      this.current = this.load()
        .catch((error: Error) =>
          this.logger.error(`Provider index reload failed: ${error.stack ?? error.message}`),
        )
        .finally(() => {
          this.current = null;
        });
      return this.current;
    }
    this.queued ??= this.current.then(() => {
      this.queued = null;
      return this.reload();
    });
    return this.queued;
  }

  /** `x-gateway-provider: @<slug>` in a workspace. */
  lookupProviderSlug(workspaceId: string, slug: string): DirectoryLookup | Promise<DirectoryLookup> {
    return this.lookup(workspaceId, slug);
  }

  /** `x-gateway-virtual-key: <slug>` in a workspace. Providers replace virtual keys: one slug space. */
  lookupVirtualKey(workspaceId: string, slug: string): DirectoryLookup | Promise<DirectoryLookup> {
    return this.lookup(workspaceId, slug);
  }

  /** Entries of a workspace that can serve now (for ModelDirectory), without reading secrets. */
  usableInWorkspace(
    workspaceId: string,
    now = Date.now(),
  ): { row: ProviderEntity; rules: ModelRules; providerName: string }[] {
    return (this.snapshot.byWorkspace.get(workspaceId) ?? [])
      .filter((entry) => !this.refusalOf(entry, now))
      .map((entry) => ({
        row: entry.row,
        providerName: entry.integration?.providerName ?? entry.row.ai_provider_id,
        rules: entry.integration?.rules ?? EMPTY_RULES,
      }));
  }

  private lookup(workspaceId: string, slug: string): DirectoryLookup | Promise<DirectoryLookup> {
    const entry = this.snapshot.byKey.get(entryKey(workspaceId, slug));
    if (!entry) return null;
    const refused = this.refusalOf(entry, Date.now());
    if (refused) return refused;
    if (entry.ready) return entry.ready;
    return this.resolveDynamic(entry);
  }

  private refusalOf(entry: Entry, now: number): ProviderRefusal | null {
    if (entry.refusal) return entry.refusal;
    const expiresAt = entry.row.expires_at;
    if (entry.row.status === 'expired' || (expiresAt && expiresAt.getTime() <= now)) {
      return refusal(entry.row, 'expired', 401, `Provider '${entry.row.slug}' has expired`);
    }
    return null;
  }

  /**
   * Secret-mapped credentials and minted tokens: from the resolvers' memory when they hold them
   * (synchronously), else read once (a promise) and cached by them for the next requests.
   */
  private resolveDynamic(entry: Entry): DirectoryLookup | Promise<DirectoryLookup> {
    const settings = { ...entry.settings };
    let key = entry.key;
    const missing: typeof entry.mappings = [];
    for (const item of entry.mappings) {
      const { mapping, reference } = item;
      if (!reference) {
        return refusal(
          entry.row,
          'secret_unavailable',
          502,
          `Provider '${entry.row.slug}' maps ${mapping.target_field} to secret reference '${mapping.secret_reference_id}', which no longer exists`,
        );
      }
      if (!reference.allowAll && !reference.allowed.has(entry.row.workspace_id)) {
        return refusal(
          entry.row,
          'secret_not_allowed',
          403,
          `Secret reference ${describe(reference)} may not be used by this workspace (provider '${entry.row.slug}')`,
        );
      }
      const value = this.resolver.peek(
        reference.target.id,
        mapping.secret_key ?? reference.target.key ?? null,
      );
      if (value === undefined) missing.push(item);
      else {
        const applied = applyMapping(settings, mapping, value, reference);
        if (typeof applied === 'string') return refusal(entry.row, 'secret_unavailable', 502, applied);
        if (applied.key !== undefined) key = applied.key;
      }
    }
    if (missing.length > 0) return this.resolveCold(entry, settings, key, missing);
    return this.finish(entry, settings, key);
  }

  private async resolveCold(
    entry: Entry,
    settings: Record<string, unknown>,
    key: string | null,
    missing: Entry['mappings'],
  ): Promise<DirectoryLookup> {
    for (const { mapping, reference } of missing) {
      let value: string;
      try {
        value = await this.resolver.resolve(reference!.target, { key: mapping.secret_key ?? undefined });
      } catch (error) {
        return refusal(
          entry.row,
          'secret_unavailable',
          error instanceof AppError ? error.status : 502,
          `Provider '${entry.row.slug}': ${(error as Error).message}`,
        );
      }
      const applied = applyMapping(settings, mapping, value, reference!);
      if (typeof applied === 'string') return refusal(entry.row, 'secret_unavailable', 502, applied);
      if (applied.key !== undefined) key = applied.key;
    }
    return this.finish(entry, settings, key);
  }

  private finish(
    entry: Entry,
    settings: Record<string, unknown>,
    key: string | null,
  ): DirectoryLookup | Promise<DirectoryLookup> {
    const providerName = entry.integration?.providerName ?? entry.row.ai_provider_id;
    const request =
      entry.mappings.length === 0 ? entry.tokenRequest : tokenRequestFor(providerName, settings);
    if (!request) return this.build(entry, settings, key, null);
    const token = this.tokens.peek(request);
    if (token !== undefined) return this.build(entry, settings, key, { request, token });
    return this.tokens.get(request).then(
      (minted) => this.build(entry, settings, key, { request, token: minted }),
      (error: Error) =>
        refusal(entry.row, 'token_unavailable', 502, `Provider '${entry.row.slug}': ${error.message}`),
    );
  }

  private build(
    entry: Entry,
    settings: Record<string, unknown>,
    key: string | null,
    token: { request: TokenRequest; token: string } | null,
  ): ResolvedProvider {
    const { row, integration } = entry;
    const providerName = integration?.providerName ?? row.ai_provider_id;
    const credentials = settingsToCredentials(providerName, settings, key);
    if (token) token.request.apply(credentials, token.token);
    const rules = integration?.rules ?? EMPTY_RULES;
    const headers = settings.custom_headers as Record<string, string> | undefined;
    return freezeDeep({
      refused: false as const,
      kind: row.kind,
      providerId: row.id,
      slug: row.slug,
      name: row.name,
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      integrationId: integration?.id ?? null,
      integrationSlug: integration?.slug ?? null,
      providerName,
      credentials,
      customHeaders: headers && Object.keys(headers).length > 0 ? { ...headers } : null,
      azureDeployments: (settings.azure_deployment_config as AzureDeployment[] | undefined) ?? null,
      allowedModels: rules.allowedModels,
      deniedModels: rules.deniedModels,
      customModels: rules.customModels,
      pricing: rules.pricing,
      usageLimits: row.usage_limits,
      rateLimits: row.rate_limits,
      integrationLimits: entry.integrationLimits,
      expiresAt: row.expires_at,
    });
  }

  private async load(): Promise<void> {
    const manager = this.dataSource.manager;
    const [integrationRows, grantRows, modelRows, providerRows, referenceRows] = await Promise.all([
      manager.getRepository(IntegrationEntity).find(),
      manager.getRepository(IntegrationWorkspaceEntity).find(),
      manager.getRepository(IntegrationModelEntity).find(),
      manager.getRepository(ProviderEntity).find(),
      manager.getRepository(SecretReferenceEntity).find(),
    ]);

    const references = new Map<string, ReferenceIndex>();
    for (const row of referenceRows) {
      try {
        const target: SecretReferenceTarget = {
          id: row.id,
          name: row.name,
          managerType: row.manager_type as SecretManagerType,
          authConfig: this.cipher.decryptJson<Record<string, unknown>>(row.auth_config_encrypted),
          path: row.secret_path,
          key: row.secret_key,
        };
        const fingerprint = createHash('sha256')
          .update(JSON.stringify([target.managerType, target.authConfig, target.path, target.key]))
          .digest('hex');
        references.set(row.id, {
          target,
          allowAll: row.allow_all_workspaces,
          allowed: new Set(row.allowed_workspaces),
          fingerprint,
        });
      } catch (error) {
        this.logger.error(`Secret reference ${row.id} cannot be opened: ${(error as Error).message}`);
      }
    }
    // A changed or removed reference must not be answered from the resolver's memory on this replica.
    for (const [id, previous] of this.references) {
      if (references.get(id)?.fingerprint !== previous.fingerprint) this.resolver.invalidate(id);
    }

    const modelsByIntegration = new Map<string, IntegrationModelEntity[]>();
    for (const row of modelRows) {
      const list = modelsByIntegration.get(row.integration_id) ?? [];
      list.push(row);
      modelsByIntegration.set(row.integration_id, list);
    }
    const grantsByIntegration = new Map<string, IntegrationWorkspaceEntity[]>();
    for (const row of grantRows) {
      const list = grantsByIntegration.get(row.integration_id) ?? [];
      list.push(row);
      grantsByIntegration.set(row.integration_id, list);
    }

    const integrations = new Map<string, IntegrationIndex>();
    for (const row of integrationRows) {
      try {
        const opened = openSettings(this.cipher, row);
        const global = row.global_workspace_access;
        integrations.set(row.id, {
          id: row.id,
          slug: row.slug,
          status: row.status,
          workspaceId: row.workspace_id,
          providerName: row.ai_provider_id,
          settings: opened.settings,
          key: opened.key,
          mappings: row.secret_mappings ?? [],
          rules: modelRules(row, modelsByIntegration.get(row.id) ?? []),
          global: global
            ? {
                enabled: global.enabled,
                limits: { usageLimits: first(global.usage_limits), rateLimits: global.rate_limits },
              }
            : null,
          grants: new Map(
            (grantsByIntegration.get(row.id) ?? []).map((grant) => [
              grant.workspace_id,
              {
                enabled: grant.enabled,
                limits: { usageLimits: first(grant.usage_limits), rateLimits: grant.rate_limits },
              },
            ]),
          ),
        });
      } catch (error) {
        this.logger.error(`Integration ${row.id} cannot be opened: ${(error as Error).message}`);
      }
    }

    const byKey = new Map<string, Entry>();
    const byWorkspace = new Map<string, Entry[]>();
    for (const row of providerRows) {
      let entry: Entry;
      try {
        entry = this.entryOf(
          row,
          row.integration_id ? (integrations.get(row.integration_id) ?? null) : null,
          references,
        );
      } catch (error) {
        this.logger.error(`Provider ${row.id} cannot be opened: ${(error as Error).message}`);
        continue;
      }
      byKey.set(entryKey(row.workspace_id, row.slug), entry);
      const list = byWorkspace.get(row.workspace_id) ?? [];
      list.push(entry);
      byWorkspace.set(row.workspace_id, list);
    }
    this.references = references;
    this.snapshot = { byKey, byWorkspace, generation: this.snapshot.generation + 1 };
    for (const listener of this.listeners) listener();
  }

  private entryOf(
    row: ProviderEntity,
    integration: IntegrationIndex | null,
    references: Map<string, ReferenceIndex>,
  ): Entry {
    const own = openSettings(this.cipher, row);
    let staticRefusal: ProviderRefusal | null = null;
    let integrationLimits: ProviderLimits | null = null;
    if (row.status === 'disabled') {
      staticRefusal = refusal(row, 'disabled', 403, `Provider '${row.slug}' is disabled`);
    } else if (row.status === 'exhausted') {
      staticRefusal = refusal(row, 'exhausted', 429, `Provider '${row.slug}' has used up its usage limit`);
    } else if (row.integration_id && !integration) {
      staticRefusal = refusal(
        row,
        'integration_archived',
        403,
        `The integration of provider '${row.slug}' no longer exists`,
      );
    } else if (integration) {
      if (integration.status !== 'active') {
        staticRefusal = refusal(
          row,
          'integration_archived',
          403,
          `Integration '${integration.slug}' of provider '${row.slug}' is archived`,
        );
      } else if (integration.workspaceId) {
        if (integration.workspaceId !== row.workspace_id) {
          staticRefusal = refusal(
            row,
            'integration_not_granted',
            403,
            `Integration '${integration.slug}' belongs to another workspace`,
          );
        }
      } else {
        const grant = integration.grants.get(row.workspace_id);
        const enabled = grant ? grant.enabled : (integration.global?.enabled ?? false);
        if (!enabled) {
          staticRefusal = refusal(
            row,
            'integration_not_granted',
            403,
            `Integration '${integration.slug}' is not enabled for this workspace (provider '${row.slug}')`,
          );
        } else {
          integrationLimits = grant?.limits ?? integration.global?.limits ?? null;
        }
      }
    }
    const settings = integration ? { ...integration.settings, ...own.settings } : own.settings;
    const key = own.key ?? integration?.key ?? null;
    const mappings = [...(integration?.mappings ?? []), ...(row.secret_mappings ?? [])].map((mapping) => ({
      mapping,
      reference: references.get(mapping.secret_reference_id) ?? null,
    }));
    const entry: Entry = {
      row,
      integration,
      refusal: staticRefusal,
      settings,
      key,
      mappings,
      ready: null,
      tokenRequest: null,
      integrationLimits,
    };
    const providerName = integration?.providerName ?? row.ai_provider_id;
    if (!staticRefusal && mappings.length === 0) {
      entry.tokenRequest = tokenRequestFor(providerName, settings);
      if (!entry.tokenRequest) entry.ready = this.build(entry, settings, key, null);
    }
    return entry;
  }
}

const EMPTY_RULES: ModelRules = freezeDeep({
  allowedModels: null,
  deniedModels: [],
  customModels: [],
  pricing: { adjustments: null, models: {} },
});

function first<T>(list: T[] | null | undefined): T | null {
  return list && list.length > 0 ? list[0] : null;
}

function describe(reference: ReferenceIndex): string {
  return reference.target.name
    ? `'${reference.target.name}' (${reference.target.id})`
    : `'${reference.target.id}'`;
}

function modelRules(integration: IntegrationEntity, models: IntegrationModelEntity[]): ModelRules {
  const sorted = [...models].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const enabled = sorted.filter((model) => model.enabled).map((model) => model.slug);
  const pricingModels: Record<string, PricingOverride> = {};
  for (const model of sorted) {
    const override = pricingConfigToOverride(model.pricing_config);
    if (override) pricingModels[model.slug] = override;
  }
  return {
    allowedModels: integration.allow_all_models ? null : enabled,
    deniedModels: sorted.filter((model) => !model.enabled).map((model) => model.slug),
    customModels: sorted.filter((model) => model.is_custom && model.enabled).map((model) => model.slug),
    pricing: {
      adjustments: adjustmentsToOverride(integration.pricing_adjustments),
      models: pricingModels,
    },
  };
}

/** Puts one secret value where its mapping says; a string answer is the refusal message. */
function applyMapping(
  settings: Record<string, unknown>,
  mapping: StoredSecretMapping,
  value: string,
  reference: ReferenceIndex,
): { key?: string } | string {
  let parsed: unknown = value;
  if (mapping.value_format === 'json') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return `Secret reference ${describe(reference)} does not hold JSON, which ${mapping.target_field} needs`;
    }
  }
  if (mapping.target_field === 'key') {
    return { key: typeof parsed === 'string' ? parsed : value };
  }
  const field = mapping.target_field.slice('configurations.'.length);
  if (field === 'vertex_service_account_json') {
    const account = parsed as ServiceAccount | null;
    if (
      !account ||
      typeof account !== 'object' ||
      typeof account.private_key !== 'string' ||
      typeof account.client_email !== 'string'
    ) {
      return `Secret reference ${describe(reference)} does not hold a service account key (client_email, private_key)`;
    }
  }
  settings[field] = parsed;
  return {};
}

/** The model refusal for a request, or null when the provider may serve `model`. */
export function checkModel(resolved: ResolvedProvider, model: string): ProviderRefusal | null {
  const allowed = resolved.allowedModels
    ? resolved.allowedModels.includes(model)
    : !resolved.deniedModels.includes(model);
  if (allowed) return null;
  return refusal(
    { id: resolved.providerId, slug: resolved.slug },
    'model_not_allowed',
    403,
    `Model '${model}' is not enabled for provider '${resolved.slug}'${
      resolved.integrationSlug ? ` (integration '${resolved.integrationSlug}')` : ''
    }`,
  );
}

/** Credentials for `model`: Azure calls go to the deployment that serves it (alias, model or name). */
export function credentialsForModel(
  resolved: ResolvedProvider,
  model: string | undefined,
): ProviderCredentials {
  if (!model || !resolved.azureDeployments) return resolved.credentials;
  const deployment = deploymentForModel(resolved.azureDeployments, model);
  if (!deployment) return resolved.credentials;
  return {
    ...resolved.credentials,
    azureDeploymentId: deployment.azure_deployment_name,
    azureApiVersion: deployment.azure_api_version,
  };
}

/** Resolved providers are shared objects, so their prices are worked out once per model. */
const pricingMemo = new WeakMap<ResolvedProvider, Map<string, ModelPricing | null>>();

/**
 * The pricing that applies to a call of `model` through this provider: a model's own
 * `pricing_config`, else the catalog entry with the integration's adjustments; null when unknown.
 */
export function pricingFor(resolved: ResolvedProvider, model: string): ModelPricing | null {
  let byModel = pricingMemo.get(resolved);
  if (!byModel) {
    byModel = new Map();
    pricingMemo.set(resolved, byModel);
  }
  const cached = byModel.get(model);
  if (cached !== undefined) return cached;
  const modelOverride = resolved.pricing.models[model];
  const base = modelOverride ? null : getModelPricing(resolved.providerName, model);
  const override = modelOverride ?? resolved.pricing.adjustments;
  const pricing = resolvePricing(base, override, { provider: resolved.providerName, model });
  // Model names come from callers: the bound keeps hostile names from growing the map.
  if (byModel.size < 1000) byModel.set(model, pricing);
  return pricing;
}
