import { Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import { AppError, InvalidationBus, isUuid } from '@switchboard/common';
import type { CacheSettings, GatewayConfig } from './config.types';
import { parseConfigJson, validateConfig } from './config-validation';
import { ConfigErrors } from './configs.errors';
import { ConfigEntity } from './entities/config.entity';

export const CONFIGS_TOPIC = 'configs';
/** Safety net for a missed invalidation message; changes normally arrive at once. */
const FULL_RELOAD_MS = 5 * 60 * 1000;
/** A reference that matched nothing is not looked up again for this long (unless something changes). */
const NEGATIVE_TTL_MS = 5_000;
const MAX_CACHED_INLINE_LENGTH = 16 * 1024;

/** An active stored config as the data plane sees it. */
export interface StoredConfig {
  id: string;
  slug: string;
  organisationId: string;
  workspaceId: string;
  versionId: string;
  isDefault: boolean;
  /** Null when the stored config no longer passes validation; `problem` says why. */
  config: GatewayConfig | null;
  problem: AppError | null;
}

export type RequestConfigSource = 'inline' | 'header' | 'api_key_default' | 'workspace_default';

/** The config that governs one request. */
export interface RequestConfig {
  config: GatewayConfig;
  /** Stored configs only. */
  id: string | null;
  slug: string | null;
  versionId: string | null;
  source: RequestConfigSource;
  /** Identity of the config (workspace, id and version, or a hash of the inline JSON): keys breakers and the cache. */
  scope: string;
  cache: CacheSettings | null;
}

export interface RequestConfigInput {
  workspaceId: string;
  /** The `x-gateway-config` header: an id, a slug, or inline JSON. */
  header?: string | string[] | null;
  /** The API key's defaults (`principal.apiKey.defaults`). */
  apiKeyDefaults?: { config_id?: string; allow_config_override?: boolean } | null;
}

interface WorkspaceConfigs {
  byRef: Map<string, StoredConfig>;
  defaultConfig: StoredConfig | null;
}

type Change = { kind: 'upsert'; entity: ConfigEntity } | { kind: 'remove'; id: string; workspaceId: string };

function toStored(entity: ConfigEntity, logger: Logger): StoredConfig {
  let config: GatewayConfig | null = null;
  let problem: AppError | null = null;
  try {
    config = validateConfig(entity.config);
  } catch (error) {
    problem = error instanceof AppError ? error : ConfigErrors.invalid('', 'could not be read', 'config');
    logger.warn(`Config ${entity.slug} (${entity.id}) no longer validates: ${problem.message}`);
  }
  return {
    id: entity.id,
    slug: entity.slug,
    organisationId: entity.organisation_id,
    workspaceId: entity.workspace_id,
    versionId: entity.version_id,
    isDefault: entity.is_default,
    config,
    problem,
  };
}

/**
 * Every active config in memory, by workspace, id and slug, with each workspace's default: the
 * data plane never reads the database on a warm path. Writes here update this replica at once;
 * other replicas reload on the invalidation message (through Redis when configured).
 */
@Injectable()
export class ConfigStore implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(ConfigStore.name);
  private workspaces = new Map<string, WorkspaceConfigs>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;
  private reloadAgain = false;
  private changesDuringLoad: Change[] | null = null;
  private readonly misses = new Map<string, number>();
  private readonly inline = new LRUCache<string, { config: GatewayConfig; scope: string } | AppError>({
    max: 1000,
  });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: InvalidationBus,
  ) {}

  onModuleInit(): void {
    this.bus.on(CONFIGS_TOPIC, () => {
      void this.reload().catch((error: Error) => this.logger.error(`Config reload failed: ${error.message}`));
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
  }

  /** Loads every active config; concurrent calls share one load, and a call during a load runs another. */
  reload(): Promise<void> {
    if (this.loading) {
      this.reloadAgain = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = null;
      if (this.reloadAgain) {
        this.reloadAgain = false;
        void this.reload().catch((error: Error) =>
          this.logger.error(`Config reload failed: ${error.message}`),
        );
      }
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    this.changesDuringLoad = [];
    const started = Date.now();
    try {
      const rows = await this.dataSource.getRepository(ConfigEntity).find({ where: { status: 'active' } });
      const next = new Map<string, WorkspaceConfigs>();
      for (const row of rows) this.put(next, toStored(row, this.logger));
      // Changes this replica made while the rows were read are newer than the rows.
      for (const change of this.changesDuringLoad) this.apply(next, change);
      this.workspaces = next;
      this.misses.clear();
      this.loadedAt = started;
    } finally {
      this.changesDuringLoad = null;
    }
  }

  /** Called by the service after a committed write, before the invalidation goes out. */
  applyChange(change: Change): void {
    this.changesDuringLoad?.push(change);
    this.apply(this.workspaces, change);
    this.misses.clear();
  }

  private apply(target: Map<string, WorkspaceConfigs>, change: Change): void {
    if (change.kind === 'remove') {
      this.drop(target, change.workspaceId, change.id);
      return;
    }
    this.drop(target, change.entity.workspace_id, change.entity.id);
    if (change.entity.status === 'active') this.put(target, toStored(change.entity, this.logger));
  }

  private drop(target: Map<string, WorkspaceConfigs>, workspaceId: string, id: string): void {
    const workspace = target.get(workspaceId);
    const existing = workspace?.byRef.get(id);
    if (!workspace || !existing) return;
    workspace.byRef.delete(existing.id);
    workspace.byRef.delete(existing.slug);
    if (workspace.defaultConfig?.id === id) workspace.defaultConfig = null;
  }

  private put(target: Map<string, WorkspaceConfigs>, stored: StoredConfig): void {
    let workspace = target.get(stored.workspaceId);
    if (!workspace) {
      workspace = { byRef: new Map(), defaultConfig: null };
      target.set(stored.workspaceId, workspace);
    }
    workspace.byRef.set(stored.id, stored);
    workspace.byRef.set(stored.slug, stored);
    if (stored.isDefault) workspace.defaultConfig = stored;
  }

  private refreshIfStale(): void {
    if (Date.now() - this.loadedAt > FULL_RELOAD_MS && !this.loading) {
      void this.reload().catch((error: Error) => this.logger.error(`Config reload failed: ${error.message}`));
    }
  }

  /** An active config of the workspace by id or slug, from memory. */
  find(workspaceId: string, ref: string): StoredConfig | null {
    return this.workspaces.get(workspaceId)?.byRef.get(ref) ?? null;
  }

  /** The workspace's default config, from memory. */
  defaultFor(workspaceId: string): StoredConfig | null {
    return this.workspaces.get(workspaceId)?.defaultConfig ?? null;
  }

  /**
   * By id or slug: memory first; on a miss one database read, in case an invalidation message
   * was lost, remembered briefly when it finds nothing.
   */
  async lookup(workspaceId: string, ref: string): Promise<StoredConfig | null> {
    this.refreshIfStale();
    const found = this.find(workspaceId, ref);
    if (found) return found;
    const missKey = `${workspaceId}\n${ref}`;
    const missedAt = this.misses.get(missKey);
    if (missedAt !== undefined && Date.now() - missedAt < NEGATIVE_TTL_MS) return null;
    const where = isUuid(ref)
      ? [
          { workspace_id: workspaceId, id: ref, status: 'active' as const },
          { workspace_id: workspaceId, slug: ref, status: 'active' as const },
        ]
      : [{ workspace_id: workspaceId, slug: ref, status: 'active' as const }];
    const row = await this.dataSource.getRepository(ConfigEntity).findOne({ where });
    if (!row) {
      if (this.misses.size > 10_000) this.misses.clear();
      this.misses.set(missKey, Date.now());
      return null;
    }
    const stored = toStored(row, this.logger);
    this.put(this.workspaces, stored);
    return stored;
  }

  /**
   * The config that governs a request: `x-gateway-config` (inline JSON, id or slug), else the
   * API key's default config, else the workspace's default config, else none. A key whose
   * defaults say `allow_config_override: false` refuses a different header config.
   */
  async resolveForRequest(input: RequestConfigInput): Promise<RequestConfig | null> {
    const header = Array.isArray(input.header) ? input.header[0] : input.header;
    const keyDefault = input.apiKeyDefaults?.config_id;
    if (header) {
      if (keyDefault && input.apiKeyDefaults?.allow_config_override === false && header !== keyDefault)
        throw ConfigErrors.overrideNotAllowed();
      if (header.trimStart().startsWith('{')) return this.inlineConfig(input.workspaceId, header);
      return this.storedConfig(input.workspaceId, header, 'header', 'x-gateway-config');
    }
    if (keyDefault)
      return this.storedConfig(input.workspaceId, keyDefault, 'api_key_default', 'x-gateway-api-key');
    this.refreshIfStale();
    const fallback = this.defaultFor(input.workspaceId);
    return fallback ? this.toRequestConfig(fallback, 'workspace_default') : null;
  }

  private async storedConfig(
    workspaceId: string,
    ref: string,
    source: RequestConfigSource,
    param: string,
  ): Promise<RequestConfig> {
    const stored = await this.lookup(workspaceId, ref);
    if (!stored) throw ConfigErrors.requestConfigNotFound(ref, param);
    return this.toRequestConfig(stored, source);
  }

  private toRequestConfig(stored: StoredConfig, source: RequestConfigSource): RequestConfig {
    if (!stored.config) throw stored.problem ?? ConfigErrors.invalid('', 'could not be read', 'config');
    return {
      config: stored.config,
      id: stored.id,
      slug: stored.slug,
      versionId: stored.versionId,
      source,
      scope: `${stored.workspaceId}:${stored.id}:${stored.versionId}`,
      cache: stored.config.cache ?? null,
    };
  }

  /** Inline configs are parsed and validated once per distinct header value. */
  private inlineConfig(workspaceId: string, header: string): RequestConfig {
    let parsed = this.inline.get(header);
    if (!parsed) {
      try {
        parsed = {
          config: parseConfigJson(header),
          scope: createHash('sha256').update(header).digest('hex').slice(0, 32),
        };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        parsed = error;
      }
      // Large one-off configs are not worth the memory; the common case is one header value reused.
      if (header.length <= MAX_CACHED_INLINE_LENGTH) this.inline.set(header, parsed);
    }
    if (parsed instanceof AppError) throw parsed;
    return {
      config: parsed.config,
      id: null,
      slug: null,
      versionId: null,
      source: 'inline',
      scope: `${workspaceId}:inline:${parsed.scope}`,
      cache: parsed.config.cache ?? null,
    };
  }
}
