import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import {
  AppError,
  DomainEventMap,
  DomainEvents,
  Principal,
  listEnvelope,
  slugify,
  toPage,
} from '@switchboard/common';
import { insertable } from '@switchboard/database';
import { WorkspacesService } from '@switchboard/identity';
import { SecretCipher } from '@switchboard/secrets';
import { listModels } from './catalog';
import { IntegrationModelEntity } from './entities/integration-model.entity';
import { IntegrationWorkspaceEntity } from './entities/integration-workspace.entity';
import { GlobalWorkspaceAccess, IntegrationEntity } from './entities/integration.entity';
import { ProviderEntity } from './entities/provider.entity';
import {
  BulkUpdateModelsDto,
  BulkUpdateWorkspacesDto,
  CreateIntegrationDto,
  ListIntegrationsQueryDto,
  UpdateIntegrationDto,
} from './dto/integration.dto';
import {
  createDefaultProvider,
  findIntegration,
  findVisibleIntegration,
  grantedTo,
} from './integration-access';
import { IntegrationErrors } from './integrations.errors';
import {
  StoredModel,
  toIntegrationDetail,
  toIntegrationListItem,
  toModelResponse,
} from './integrations.mapper';
import { checkPricingConfig } from './pricing-overrides';
import { ProviderDirectory } from './provider-directory';
import { canonicalProvider } from './provider-settings';
import { mergeSettings, openSettings, sealCredentials, toJson, toJsonList } from './sealed-settings';
import { SecretReferencesService } from './secret-references.service';
import { parseTagsFilter } from './tags';

function matchesTags(tags: Record<string, string>, filter: Record<string, string> | null): boolean {
  return !filter || Object.entries(filter).every(([key, value]) => tags?.[key] === value);
}

/** How integrations name and check their settings: under `configurations`, snake_case, strictly. */
const INTEGRATION_SETTINGS = { paramPrefix: 'configurations', camel: false, strictDeployments: true };

@Injectable()
export class IntegrationsService implements OnModuleInit {
  private readonly logger = new Logger(IntegrationsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly workspaces: WorkspacesService,
    private readonly secretReferences: SecretReferencesService,
    private readonly directory: ProviderDirectory,
    private readonly events: DomainEvents,
  ) {}

  onModuleInit(): void {
    this.events.on('workspace.created', (event) => this.grantNewWorkspace(event));
  }

  /**
   * A workspace made after an integration was granted to every workspace gets that integration's
   * default provider, in the workspace's own transaction, unless the grant said not to.
   */
  private async grantNewWorkspace({
    manager,
    principal,
    workspaceId,
    afterCommit,
  }: DomainEventMap['workspace.created']): Promise<void> {
    const integrations = await manager.getRepository(IntegrationEntity).find({
      where: { organisation_id: principal.organisationId, workspace_id: IsNull(), status: 'active' },
      order: { created_at: 'ASC' },
    });
    let created = 0;
    for (const row of integrations) {
      const global = row.global_workspace_access;
      if (!global?.enabled || global.create_default_provider === false) continue;
      await createDefaultProvider(manager, principal, row, workspaceId, undefined, 'workspace');
      created += 1;
    }
    if (created > 0) afterCommit(() => this.directory.changed());
  }

  async create(principal: Principal, dto: CreateIntegrationDto) {
    const provider = canonicalProvider(dto.ai_provider_id, 'ai_provider_id');
    const result = await this.dataSource.transaction(async (manager) => {
      let workspaceId: string | null = null;
      if (dto.workspace_id) {
        const workspace = await this.workspaces.findVisible(principal, dto.workspace_id, manager);
        if (workspace.status !== 'active') throw IntegrationErrors.workspaceArchived(dto.workspace_id);
        workspaceId = workspace.id;
      } else if (dto.default_provider_slug) {
        throw IntegrationErrors.invalidField(
          'default_provider_slug',
          'applies only to workspace-scoped integrations (give workspace_id), or to PUT /integrations/{slug}/workspaces',
          'dependsOn',
        );
      }
      const repository = manager.getRepository(IntegrationEntity);
      const slug = dto.slug ?? (await this.uniqueSlug(manager, principal.organisationId, dto.name));
      if (await repository.exists({ where: { organisation_id: principal.organisationId, slug } })) {
        throw IntegrationErrors.integrationSlugTaken(slug);
      }
      const mappings = await this.secretReferences.normaliseMappings(
        manager,
        principal,
        dto.secret_mappings ?? [],
        {
          provider,
          camel: false,
          workspaceId,
        },
      );
      const sealed = sealCredentials(
        this.cipher,
        provider,
        { settings: dto.configurations ?? {}, mappings, key: dto.key ?? undefined, storedKey: null },
        INTEGRATION_SETTINGS,
      );
      const entity = repository.create({
        id: randomUUID(),
        organisation_id: principal.organisationId,
        workspace_id: workspaceId,
        slug,
        name: dto.name,
        description: dto.description ?? null,
        ai_provider_id: provider,
        status: 'active',
        key_encrypted: null,
        key_mask: null,
        ...sealed.columns,
        pricing_adjustments: dto.pricing_adjustments ? toJson(dto.pricing_adjustments) : null,
        tags: dto.tags ?? {},
        allow_all_models: true,
        global_workspace_access: null,
        created_by_user_id: principal.user?.id ?? null,
        created_by_key_id: principal.apiKey?.id ?? null,
      });
      await repository.insert(insertable(entity));
      let defaultProvider: ProviderEntity | null = null;
      if (workspaceId && dto.create_default_provider !== false) {
        defaultProvider = await createDefaultProvider(
          manager,
          principal,
          entity,
          workspaceId,
          dto.default_provider_slug,
          'default_provider_slug',
        );
      }
      const saved = await repository.findOneByOrFail({ id: entity.id });
      return { saved, secret: sealed.secret, defaultProvider };
    });
    await this.directory.changed();
    return {
      ...toIntegrationDetail(result.saved, result.secret, result.saved.workspace_id ? 1 : 0),
      default_provider: result.defaultProvider
        ? {
            id: result.defaultProvider.id,
            slug: result.defaultProvider.slug,
            workspace_id: result.defaultProvider.workspace_id,
          }
        : null,
    };
  }

  async list(principal: Principal, query: ListIntegrationsQueryDto) {
    const { skip, take } = toPage(query);
    const tags = parseTagsFilter(query.tags);
    let workspaceId: string | null = null;
    if (!principal.organisationWide) workspaceId = principal.workspaceId ?? '';
    if (query.workspace_id)
      workspaceId = (await this.workspaces.findVisible(principal, query.workspace_id)).id;
    const where: Record<string, unknown> = { organisation_id: principal.organisationId };
    if (query.ai_provider_id)
      where.ai_provider_id = canonicalProvider(query.ai_provider_id, 'ai_provider_id');
    const rows = await this.dataSource
      .getRepository(IntegrationEntity)
      .find({ where, order: { created_at: 'DESC', id: 'ASC' } });
    const grants = workspaceId
      ? await this.dataSource
          .getRepository(IntegrationWorkspaceEntity)
          .find({ where: { organisation_id: principal.organisationId, workspace_id: workspaceId } })
      : [];
    const grantOf = new Map(grants.map((grant) => [grant.integration_id, grant]));
    // Integrations are few per organisation; the access rules read JSON, so they are applied here.
    const visible = rows.filter((row) => {
      if (query.type === 'workspace' && !row.workspace_id) return false;
      if (query.type === 'organisation' && row.workspace_id) return false;
      if (workspaceId && !grantedTo(row, workspaceId, grantOf.get(row.id))) return false;
      return matchesTags(row.tags, tags);
    });
    return listEnvelope(visible.slice(skip, skip + take).map(toIntegrationListItem), visible.length);
  }

  async get(principal: Principal, idOrSlug: string) {
    const row = await findVisibleIntegration(this.dataSource.manager, principal, idOrSlug);
    return toIntegrationDetail(
      row,
      openSettings(this.cipher, row).secret,
      await this.workspaceCount(this.dataSource.manager, row),
    );
  }

  async update(principal: Principal, idOrSlug: string, dto: UpdateIntegrationDto) {
    const result = await this.dataSource.transaction(async (manager) => {
      const row = await findVisibleIntegration(manager, principal, idOrSlug);
      const opened = openSettings(this.cipher, row);
      const mappings =
        dto.secret_mappings !== undefined
          ? await this.secretReferences.normaliseMappings(manager, principal, dto.secret_mappings, {
              provider: row.ai_provider_id,
              camel: false,
              workspaceId: row.workspace_id,
            })
          : row.secret_mappings;
      const settings = dto.configurations
        ? mergeSettings(opened.settings, dto.configurations)
        : opened.settings;
      const sealed = sealCredentials(
        this.cipher,
        row.ai_provider_id,
        { settings, mappings, key: dto.key, storedKey: opened.key },
        INTEGRATION_SETTINGS,
      );
      Object.assign(row, sealed.columns);
      if (dto.name !== undefined) row.name = dto.name;
      if (dto.description !== undefined) row.description = dto.description;
      if (dto.tags !== undefined) row.tags = dto.tags ?? {};
      if (dto.pricing_adjustments !== undefined) {
        row.pricing_adjustments = dto.pricing_adjustments ? toJson(dto.pricing_adjustments) : null;
      }
      await manager.getRepository(IntegrationEntity).save(row);
      return { row, secret: sealed.secret, count: await this.workspaceCount(manager, row) };
    });
    await this.directory.changed();
    return toIntegrationDetail(result.row, result.secret, result.count);
  }

  /** Deletes the integration with its workspace grants, model settings and the providers made from it. */
  async remove(principal: Principal, idOrSlug: string) {
    const removed = await this.dataSource.transaction(async (manager) => {
      const row = await findVisibleIntegration(manager, principal, idOrSlug);
      const providers = await manager.getRepository(ProviderEntity).find({
        where: { integration_id: row.id },
        select: { id: true, slug: true, workspace_id: true },
      });
      await manager.getRepository(ProviderEntity).delete({ integration_id: row.id });
      await manager.getRepository(IntegrationWorkspaceEntity).delete({ integration_id: row.id });
      await manager.getRepository(IntegrationModelEntity).delete({ integration_id: row.id });
      await manager.getRepository(IntegrationEntity).delete({ id: row.id });
      return { row, providers };
    });
    await this.directory.changed();
    return {
      object: 'integration' as const,
      id: removed.row.id,
      slug: removed.row.slug,
      deleted: true,
      deleted_providers: removed.providers.map((provider) => ({
        slug: provider.slug,
        workspace_id: provider.workspace_id,
      })),
    };
  }

  async listWorkspaces(principal: Principal, idOrSlug: string) {
    const manager = this.dataSource.manager;
    const row = await findVisibleIntegration(manager, principal, idOrSlug);
    return this.workspacesAnswer(manager, principal, row);
  }

  /**
   * Bulk update of workspace access. Listed workspaces get their row (enabled, limits); with
   * `override_existing_workspace_access` the rows of workspaces not listed are removed (so
   * `workspaces: []` revokes every explicit grant). Every workspace this call newly grants gets a
   * default provider unless `create_default_provider` is false (per workspace, else top level).
   */
  async updateWorkspaces(principal: Principal, idOrSlug: string, dto: BulkUpdateWorkspacesDto) {
    const list = dto.workspaces ?? [];
    if (list.length === 0 && !dto.override_existing_workspace_access && !dto.global_workspace_access) {
      throw IntegrationErrors.invalidField(
        'workspaces',
        'must not be empty unless override_existing_workspace_access is true or global_workspace_access is given',
        'arrayNotEmpty',
      );
    }
    const activeWorkspaces =
      dto.global_workspace_access?.enabled === true ? await this.activeWorkspaceIds(principal) : null;
    const answer = await this.dataSource.transaction(async (manager) => {
      const row = await findVisibleIntegration(manager, principal, idOrSlug);
      if (row.workspace_id) {
        throw IntegrationErrors.invalidField(
          'workspaces',
          'cannot be changed: a workspace-scoped integration belongs to its one workspace',
          'isOrganisationIntegration',
        );
      }
      const grants = manager.getRepository(IntegrationWorkspaceEntity);
      const existing = await grants.find({ where: { integration_id: row.id } });
      const before = new Map(existing.map((grant) => [grant.workspace_id, grant]));
      const globalBefore = row.global_workspace_access?.enabled ?? false;
      const wasGranted = (workspaceId: string) => before.get(workspaceId)?.enabled ?? globalBefore;

      const listed: { id: string; entry: (typeof list)[number]; index: number }[] = [];
      for (const [index, entry] of list.entries()) {
        let workspace;
        try {
          workspace = await this.workspaces.findVisible(principal, entry.id, manager);
        } catch (error) {
          if (error instanceof AppError && error.status === 404) {
            throw IntegrationErrors.invalidField(
              `workspaces[${index}].id`,
              `'${entry.id}' is not a workspace of this organisation`,
              'isWorkspace',
            );
          }
          throw error;
        }
        if (listed.some((item) => item.id === workspace.id)) {
          throw IntegrationErrors.invalidField(
            `workspaces[${index}].id`,
            'names a workspace listed twice',
            'unique',
          );
        }
        if (entry.enabled && workspace.status !== 'active')
          throw IntegrationErrors.workspaceArchived(entry.id);
        listed.push({ id: workspace.id, entry, index });
      }

      if (dto.global_workspace_access) {
        const global: GlobalWorkspaceAccess = {
          enabled: dto.global_workspace_access.enabled,
          usage_limits: dto.global_workspace_access.usage_limits
            ? toJsonList(dto.global_workspace_access.usage_limits)
            : (row.global_workspace_access?.usage_limits ?? null),
          rate_limits: dto.global_workspace_access.rate_limits
            ? toJsonList(dto.global_workspace_access.rate_limits)
            : (row.global_workspace_access?.rate_limits ?? null),
          create_default_provider:
            dto.create_default_provider ?? row.global_workspace_access?.create_default_provider ?? true,
        };
        row.global_workspace_access = global;
        await manager.getRepository(IntegrationEntity).save(row);
      }

      const after = new Map<string, IntegrationWorkspaceEntity>();
      if (!dto.override_existing_workspace_access) for (const [id, grant] of before) after.set(id, grant);
      for (const { id, entry } of listed) {
        const previous = before.get(id);
        const grant =
          previous ??
          grants.create({
            id: randomUUID(),
            organisation_id: row.organisation_id,
            integration_id: row.id,
            workspace_id: id,
          });
        grant.enabled = entry.enabled;
        if (entry.usage_limits !== undefined)
          grant.usage_limits = entry.usage_limits ? toJsonList(entry.usage_limits) : null;
        else grant.usage_limits ??= null;
        if (entry.rate_limits !== undefined)
          grant.rate_limits = entry.rate_limits ? toJsonList(entry.rate_limits) : null;
        else grant.rate_limits ??= null;
        await grants.save(grant);
        after.set(id, grant);
      }
      if (dto.override_existing_workspace_access) {
        const removed = existing.filter((grant) => !after.has(grant.workspace_id)).map((grant) => grant.id);
        if (removed.length > 0) await grants.delete({ id: In(removed) });
      }

      // Which workspaces this call grants that were not granted before.
      const candidates = new Set<string>(listed.map((item) => item.id));
      for (const id of activeWorkspaces ?? []) candidates.add(id);
      const created: { workspace_id: string; slug: string }[] = [];
      for (const workspaceId of candidates) {
        if (wasGranted(workspaceId) || !grantedTo(row, workspaceId, after.get(workspaceId))) continue;
        const item = listed.find((entry) => entry.id === workspaceId);
        const create = item?.entry.create_default_provider ?? dto.create_default_provider ?? true;
        if (!create) continue;
        const explicit = item?.entry.default_provider_slug ?? dto.default_provider_slug;
        const param = item?.entry.default_provider_slug
          ? `workspaces[${item.index}].default_provider_slug`
          : 'default_provider_slug';
        const provider = await createDefaultProvider(manager, principal, row, workspaceId, explicit, param);
        created.push({ workspace_id: workspaceId, slug: provider.slug });
      }

      for (const { id, entry } of listed) {
        if (!entry.reset_usage) continue;
        await manager
          .getRepository(ProviderEntity)
          .update({ workspace_id: id, integration_id: row.id, status: 'exhausted' }, { status: 'active' });
      }
      return { ...(await this.workspacesAnswer(manager, principal, row)), created_providers: created };
    });
    await this.directory.changed();
    return answer;
  }

  async listModels(principal: Principal, idOrSlug: string) {
    const manager = this.dataSource.manager;
    const row = await findVisibleIntegration(manager, principal, idOrSlug);
    return this.modelsAnswer(manager, row);
  }

  async updateModels(principal: Principal, idOrSlug: string, dto: BulkUpdateModelsDto) {
    const seen = new Set<string>();
    for (const [index, model] of dto.models.entries()) {
      if (seen.has(model.slug)) {
        throw IntegrationErrors.invalidField(
          `models[${index}].slug`,
          `'${model.slug}' is listed twice`,
          'unique',
        );
      }
      seen.add(model.slug);
      if (model.pricing_config)
        checkPricingConfig(toJson(model.pricing_config), `models[${index}].pricing_config`);
      const host = model.configurations?.custom_host;
      if (host !== undefined) {
        let url: URL | null = null;
        try {
          url = new URL(host);
        } catch {
          url = null;
        }
        if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
          throw IntegrationErrors.invalidField(
            `models[${index}].configurations.custom_host`,
            'must be an absolute http(s) URL',
            'isUrl',
          );
        }
      }
      if (model.is_finetune && !model.base_model_slug) {
        throw IntegrationErrors.invalidField(
          `models[${index}].base_model_slug`,
          'is required for a fine-tuned model',
          'isDefined',
        );
      }
    }
    const answer = await this.dataSource.transaction(async (manager) => {
      const row = await findVisibleIntegration(manager, principal, idOrSlug);
      const repository = manager.getRepository(IntegrationModelEntity);
      const existing = await repository.find({ where: { integration_id: row.id } });
      const bySlug = new Map(existing.map((model) => [model.slug, model]));
      for (const input of dto.models) {
        const model =
          bySlug.get(input.slug) ??
          repository.create({
            id: randomUUID(),
            organisation_id: row.organisation_id,
            integration_id: row.id,
            slug: input.slug,
          });
        model.enabled = input.enabled;
        if (input.is_custom !== undefined) model.is_custom = input.is_custom ?? false;
        else model.is_custom ??= false;
        if (input.is_finetune !== undefined) model.is_finetune = input.is_finetune ?? false;
        else model.is_finetune ??= false;
        if (input.base_model_slug !== undefined) model.base_model_slug = input.base_model_slug;
        else model.base_model_slug ??= null;
        if (input.configurations !== undefined)
          model.configurations = input.configurations ? toJson(input.configurations) : null;
        else model.configurations ??= null;
        if (input.pricing_config !== undefined)
          model.pricing_config = input.pricing_config ? toJson(input.pricing_config) : null;
        else model.pricing_config ??= null;
        await repository.save(model);
      }
      if (dto.allow_all_models !== undefined) {
        row.allow_all_models = dto.allow_all_models;
        await manager.getRepository(IntegrationEntity).save(row);
      }
      return this.modelsAnswer(manager, row);
    });
    await this.directory.changed();
    return answer;
  }

  async deleteModels(principal: Principal, idOrSlug: string, slugsParam: string) {
    const slugs = [
      ...new Set(
        slugsParam
          .split(',')
          .map((slug) => slug.trim())
          .filter(Boolean),
      ),
    ];
    if (slugs.length === 0)
      throw IntegrationErrors.invalidField('slugs', 'must name at least one model', 'arrayNotEmpty');
    const answer = await this.dataSource.transaction(async (manager) => {
      const row = await findVisibleIntegration(manager, principal, idOrSlug);
      const repository = manager.getRepository(IntegrationModelEntity);
      const found = await repository.find({ where: { integration_id: row.id, slug: In(slugs) } });
      const missing = slugs.filter((slug) => !found.some((model) => model.slug === slug));
      if (missing.length > 0) throw IntegrationErrors.modelsNotFound(missing);
      await repository.delete({ integration_id: row.id, slug: In(slugs) });
      return { ...(await this.modelsAnswer(manager, row)), deleted: slugs };
    });
    await this.directory.changed();
    return answer;
  }

  private async modelsAnswer(manager: EntityManager, row: IntegrationEntity) {
    const stored = await manager
      .getRepository(IntegrationModelEntity)
      .find({ where: { integration_id: row.id }, order: { slug: 'ASC' } });
    const bySlug = new Map<string, StoredModel>(stored.map((model) => [model.slug, model]));
    const models: StoredModel[] = [];
    for (const catalogModel of listModels(row.ai_provider_id)) {
      const setting = bySlug.get(catalogModel.id);
      bySlug.delete(catalogModel.id);
      models.push(
        setting ?? {
          slug: catalogModel.id,
          enabled: row.allow_all_models,
          is_custom: false,
          is_finetune: false,
          base_model_slug: null,
          configurations: null,
          pricing_config: null,
        },
      );
    }
    models.push(...bySlug.values());
    return {
      object: 'list' as const,
      allow_all_models: row.allow_all_models,
      total: models.length,
      models: models.map(toModelResponse),
    };
  }

  private async workspacesAnswer(manager: EntityManager, principal: Principal, row: IntegrationEntity) {
    const global = row.global_workspace_access;
    let workspaces: { id: string; enabled: boolean; usage_limits: unknown; rate_limits: unknown }[];
    if (row.workspace_id) {
      workspaces = [{ id: row.workspace_id, enabled: true, usage_limits: null, rate_limits: null }];
    } else {
      const grants = await manager
        .getRepository(IntegrationWorkspaceEntity)
        .find({ where: { integration_id: row.id }, order: { created_at: 'ASC', id: 'ASC' } });
      workspaces = grants.map((grant) => ({
        id: grant.workspace_id,
        enabled: grant.enabled,
        usage_limits: grant.usage_limits,
        rate_limits: grant.rate_limits,
      }));
    }
    if (!principal.organisationWide)
      workspaces = workspaces.filter((entry) => entry.id === principal.workspaceId);
    return {
      object: 'list' as const,
      total: workspaces.length,
      workspaces,
      global_workspace_access: global
        ? { enabled: global.enabled, usage_limits: global.usage_limits, rate_limits: global.rate_limits }
        : { enabled: false, usage_limits: null, rate_limits: null },
    };
  }

  private async workspaceCount(manager: EntityManager, row: IntegrationEntity): Promise<number> {
    if (row.workspace_id) return 1;
    return manager
      .getRepository(IntegrationWorkspaceEntity)
      .count({ where: { integration_id: row.id, enabled: true } });
  }

  /** Every active workspace of the organisation, through the identity area's own listing. */
  private async activeWorkspaceIds(principal: Principal): Promise<string[]> {
    const ids: string[] = [];
    for (let page = 0; ; page += 1) {
      const answer = await this.workspaces.list(principal, {
        current_page: page,
        page_size: 100,
        status: 'active',
      });
      ids.push(...answer.data.map((workspace) => workspace.id));
      if (answer.data.length < 100) return ids;
    }
  }

  private async uniqueSlug(manager: EntityManager, organisationId: string, name: string): Promise<string> {
    const base = slugify(name);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const candidate = attempt === 0 ? base : `${base}-${randomUUID().slice(0, 6)}`;
      if (!(await findIntegration(manager, organisationId, candidate))) return candidate;
    }
    return `${base}-${randomUUID()}`;
  }
}
