import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, In } from 'typeorm';
import { INLINE_USAGE_STATUS, InlineUsageStatus, Principal, listEnvelope, toPage } from '@switchboard/common';
import { insertable } from '@switchboard/database';
import { WorkspacesService } from '@switchboard/identity';
import { SecretCipher } from '@switchboard/secrets';
import { IntegrationEntity } from './entities/integration.entity';
import { ProviderEntity, ProviderKind } from './entities/provider.entity';
import {
  CreateProviderDto,
  CreateVirtualKeyDto,
  ListProvidersQueryDto,
  UpdateProviderDto,
  UpdateVirtualKeyDto,
  VIRTUAL_KEY_SETTING_FIELDS,
} from './dto/provider.dto';
import {
  findIntegration,
  findVisibleIntegration,
  isGranted,
  providerSlugTaken,
  uniqueProviderSlug,
} from './integration-access';
import { IntegrationErrors } from './integrations.errors';
import { toProviderResponse, toVirtualKeyResponse } from './integrations.mapper';
import { ProviderDirectory } from './provider-directory';
import { canonicalProvider, snakeFieldOf } from './provider-settings';
import { mergeSettings, openSettings, sealCredentials, toJson, toJsonList } from './sealed-settings';
import { SecretReferencesService } from './secret-references.service';
import { parseTagsFilter, tagsMatch } from './tags';

type Kind = 'provider' | 'virtual_key';

/** How virtual keys name and check their own settings: top-level camelCase fields. */
const VIRTUAL_KEY_SETTINGS = { paramPrefix: '', camel: true, strictDeployments: false };

const DEPLOYMENT_FIELDS: Readonly<Record<string, string>> = {
  apiVersion: 'azure_api_version',
  deploymentName: 'azure_deployment_name',
  alias: 'alias',
  is_default: 'is_default',
  modelSlug: 'azure_model_slug',
};

/**
 * A virtual key's camelCase settings as canonical ones. `deploymentConfig` (or the flat
 * `deploymentName` + `apiVersion` of the oldest form) becomes `azure_deployment_config`.
 */
function virtualKeySettings(dto: Record<string, unknown>): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const field of VIRTUAL_KEY_SETTING_FIELDS) {
    const value = dto[field];
    if (value === undefined) continue;
    if (field === 'deploymentConfig') {
      if (value === null) {
        settings.azure_deployment_config = null;
        continue;
      }
      if (!Array.isArray(value)) {
        throw IntegrationErrors.invalidField(
          'deploymentConfig',
          'must be an array of deployments',
          'isArray',
        );
      }
      settings.azure_deployment_config = value.map((raw: unknown, index) => {
        if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
          throw IntegrationErrors.invalidField(`deploymentConfig[${index}]`, 'must be an object', 'isObject');
        }
        const converted: Record<string, unknown> = {};
        for (const [key, inner] of Object.entries(raw as Record<string, unknown>)) {
          const target = DEPLOYMENT_FIELDS[key];
          if (!target) {
            throw IntegrationErrors.invalidField(
              `deploymentConfig[${index}].${key}`,
              'is not a deployment field',
              'whitelistValidation',
            );
          }
          converted[target] = inner;
        }
        return converted;
      });
    } else if (field !== 'apiVersion' && field !== 'deploymentName') {
      settings[snakeFieldOf(field) ?? field] = value;
    }
  }
  if (
    (dto.apiVersion !== undefined || dto.deploymentName !== undefined) &&
    dto.deploymentConfig === undefined
  ) {
    settings.azure_deployment_config = [
      { azure_api_version: dto.apiVersion, azure_deployment_name: dto.deploymentName, is_default: true },
    ];
  }
  return settings;
}

function checkExpiry(value: string | null | undefined): Date | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const date = new Date(value);
  if (date.getTime() <= Date.now()) {
    throw IntegrationErrors.invalidField('expires_at', 'must be in the future', 'isFuture');
  }
  return date;
}

/**
 * Workspace providers and virtual keys: one resource in two spellings (providers replace virtual
 * keys). A provider always uses an integration; a virtual key uses one or carries its own key.
 */
@Injectable()
export class ProvidersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly workspaces: WorkspacesService,
    private readonly secretReferences: SecretReferencesService,
    private readonly directory: ProviderDirectory,
    @Optional() @Inject(INLINE_USAGE_STATUS) private readonly usageStatus?: InlineUsageStatus,
  ) {}

  async createProvider(principal: Principal, dto: CreateProviderDto) {
    const row = await this.dataSource.transaction(async (manager) => {
      const workspaceId = await this.targetWorkspace(manager, principal, dto.workspace_id);
      const integration = await this.usableIntegration(manager, principal, dto.integration_id, workspaceId);
      const slug = await this.slugFor(manager, workspaceId, dto.slug, dto.name);
      const entity = this.newRow(principal, workspaceId, 'provider', {
        slug,
        name: dto.name,
        note: dto.note ?? null,
        integration_id: integration.id,
        ai_provider_id: integration.ai_provider_id,
        usage_limits: dto.usage_limits ? toJson(dto.usage_limits) : null,
        rate_limits: dto.rate_limits ? toJsonList(dto.rate_limits) : null,
        expires_at: checkExpiry(dto.expires_at) ?? null,
        tags: dto.tags ?? {},
      });
      await manager.getRepository(ProviderEntity).insert(insertable(entity));
      return manager.getRepository(ProviderEntity).findOneByOrFail({ id: entity.id });
    });
    await this.directory.changed();
    return this.answer(row, 'provider');
  }

  async createVirtualKey(principal: Principal, dto: CreateVirtualKeyDto) {
    const settingsInput = virtualKeySettings(dto as unknown as Record<string, unknown>);
    if (!dto.provider && !dto.integration_id) {
      throw IntegrationErrors.invalidField('provider', 'is required (or integration_id)', 'isDefined');
    }
    if (dto.provider && dto.integration_id) {
      throw IntegrationErrors.invalidField(
        'integration_id',
        'cannot be combined with provider',
        'mutuallyExclusive',
      );
    }
    const row = await this.dataSource.transaction(async (manager) => {
      const workspaceId = await this.targetWorkspace(manager, principal, dto.workspace_id);
      const slug = await this.slugFor(manager, workspaceId, dto.slug, dto.name);
      const common = {
        slug,
        name: dto.name,
        note: dto.note ?? null,
        usage_limits: dto.usage_limits ? toJson(dto.usage_limits) : null,
        rate_limits: dto.rate_limits ? toJsonList(dto.rate_limits) : null,
        expires_at: checkExpiry(dto.expires_at) ?? null,
        tags: dto.tags ?? {},
      };
      let entity: ProviderEntity;
      if (dto.integration_id) {
        this.refuseOwnCredentials(dto, settingsInput);
        const integration = await this.usableIntegration(manager, principal, dto.integration_id, workspaceId);
        entity = this.newRow(principal, workspaceId, 'virtual_key', {
          ...common,
          integration_id: integration.id,
          ai_provider_id: integration.ai_provider_id,
        });
      } else {
        const provider = canonicalProvider(dto.provider!, 'provider');
        const mappings = await this.secretReferences.normaliseMappings(
          manager,
          principal,
          dto.secret_mappings ?? [],
          {
            provider,
            camel: true,
            workspaceId,
          },
        );
        const sealed = sealCredentials(
          this.cipher,
          provider,
          { settings: settingsInput, mappings, key: dto.key ?? undefined, storedKey: null },
          VIRTUAL_KEY_SETTINGS,
        );
        entity = this.newRow(principal, workspaceId, 'virtual_key', {
          ...common,
          integration_id: null,
          ai_provider_id: provider,
          key_encrypted: null,
          key_mask: null,
          ...sealed.columns,
        });
      }
      await manager.getRepository(ProviderEntity).insert(insertable(entity));
      return manager.getRepository(ProviderEntity).findOneByOrFail({ id: entity.id });
    });
    await this.directory.changed();
    return this.answer(row, 'virtual_key');
  }

  async list(principal: Principal, query: ListProvidersQueryDto, kind: Kind) {
    const { skip, take } = toPage(query);
    const where: Record<string, unknown> = { organisation_id: principal.organisationId };
    if (query.workspace_id)
      where.workspace_id = (await this.workspaces.findVisible(principal, query.workspace_id)).id;
    else if (!principal.organisationWide) where.workspace_id = principal.workspaceId ?? '';
    const tags = parseTagsFilter(query.tags);
    if (tags) where.tags = tagsMatch(tags);
    if (query.integration_id) {
      const integration = await findVisibleIntegration(
        this.dataSource.manager,
        principal,
        query.integration_id,
      );
      where.integration_id = integration.id;
    }
    const [rows, total] = await this.dataSource
      .getRepository(ProviderEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    const slugs = await this.integrationSlugs(this.dataSource.manager, rows);
    const exhausted = await this.exhaustedBudgets(rows);
    return listEnvelope(
      rows.map((row) =>
        this.respond(row, kind, slugs.get(row.integration_id ?? '') ?? null, exhausted.has(row.id)),
      ),
      total,
    );
  }

  async get(principal: Principal, slug: string, workspaceId: string | undefined, kind: Kind) {
    const row = await this.findRow(this.dataSource.manager, principal, slug, workspaceId, kind);
    return this.answer(row, kind);
  }

  async updateProvider(
    principal: Principal,
    slug: string,
    workspaceId: string | undefined,
    dto: UpdateProviderDto,
  ) {
    const row = await this.dataSource.transaction(async (manager) => {
      const row = await this.findRow(manager, principal, slug, workspaceId, 'provider');
      this.applyCommon(row, dto);
      await manager.getRepository(ProviderEntity).save(row);
      return row;
    });
    if (dto.reset_usage) await this.usageStatus?.reset('provider', row.id);
    await this.directory.changed();
    return this.answer(row, 'provider');
  }

  async updateVirtualKey(
    principal: Principal,
    slug: string,
    workspaceId: string | undefined,
    dto: UpdateVirtualKeyDto,
  ) {
    const patch = virtualKeySettings(dto as unknown as Record<string, unknown>);
    const row = await this.dataSource.transaction(async (manager) => {
      const row = await this.findRow(manager, principal, slug, workspaceId, 'virtual_key');
      if (row.integration_id) {
        this.refuseOwnCredentials(dto, patch);
      } else {
        const opened = openSettings(this.cipher, row);
        const mappings =
          dto.secret_mappings !== undefined
            ? await this.secretReferences.normaliseMappings(manager, principal, dto.secret_mappings, {
                provider: row.ai_provider_id,
                camel: true,
                workspaceId: row.workspace_id,
              })
            : row.secret_mappings;
        const sealed = sealCredentials(
          this.cipher,
          row.ai_provider_id,
          { settings: mergeSettings(opened.settings, patch), mappings, key: dto.key, storedKey: opened.key },
          VIRTUAL_KEY_SETTINGS,
        );
        Object.assign(row, sealed.columns);
      }
      this.applyCommon(row, dto);
      await manager.getRepository(ProviderEntity).save(row);
      return row;
    });
    if (dto.reset_usage) await this.usageStatus?.reset('provider', row.id);
    await this.directory.changed();
    return this.answer(row, 'virtual_key');
  }

  async remove(principal: Principal, slug: string, workspaceId: string | undefined, kind: Kind) {
    const row = await this.dataSource.transaction(async (manager) => {
      const row = await this.findRow(manager, principal, slug, workspaceId, kind);
      await manager.getRepository(ProviderEntity).delete({ id: row.id });
      return row;
    });
    await this.directory.changed();
    return {
      object: kind === 'provider' ? ('provider' as const) : ('virtual-key' as const),
      id: row.id,
      slug: row.slug,
      workspace_id: row.workspace_id,
      deleted: true,
    };
  }

  private applyCommon(row: ProviderEntity, dto: UpdateProviderDto | UpdateVirtualKeyDto): void {
    if (dto.name !== undefined) row.name = dto.name;
    if (dto.note !== undefined) row.note = dto.note;
    if (dto.usage_limits !== undefined) row.usage_limits = dto.usage_limits ? toJson(dto.usage_limits) : null;
    if (dto.rate_limits !== undefined) row.rate_limits = dto.rate_limits ? toJsonList(dto.rate_limits) : null;
    if (dto.tags !== undefined) row.tags = dto.tags ?? {};
    const expiresAt = checkExpiry(dto.expires_at);
    if (expiresAt !== undefined) {
      row.expires_at = expiresAt;
      if (row.status === 'expired') row.status = 'active';
    }
    if (dto.status !== undefined) row.status = dto.status;
    // A stored status only: the inline budget's counters are reset by the caller, after the commit.
    if (dto.reset_usage && row.status === 'exhausted') row.status = 'active';
  }

  private refuseOwnCredentials(
    dto: { key?: string; secret_mappings?: unknown },
    settings: Record<string, unknown>,
  ) {
    const own = dto.key !== undefined ? 'key' : dto.secret_mappings !== undefined ? 'secret_mappings' : null;
    const field =
      own ?? VIRTUAL_KEY_SETTING_FIELDS.find((name) => (dto as Record<string, unknown>)[name] !== undefined);
    if (field || Object.keys(settings).length > 0) {
      throw IntegrationErrors.invalidField(
        field ?? 'integration_id',
        "cannot be set on a virtual key that uses an integration: its credentials are the integration's",
        'mutuallyExclusive',
      );
    }
  }

  /** The workspace a write acts in: the given one (id or slug), else the caller's. */
  private async targetWorkspace(manager: EntityManager, principal: Principal, requested: string | undefined) {
    const reference = requested ?? principal.workspaceId;
    if (!reference) throw IntegrationErrors.workspaceRequired();
    const workspace = await this.workspaces.findVisible(principal, reference, manager);
    if (workspace.status !== 'active') throw IntegrationErrors.workspaceArchived(reference);
    return workspace.id;
  }

  /** The integration a new provider of `workspaceId` may use: it must be granted to that workspace. */
  private async usableIntegration(
    manager: EntityManager,
    principal: Principal,
    idOrSlug: string,
    workspaceId: string,
  ): Promise<IntegrationEntity> {
    const integration = await findIntegration(manager, principal.organisationId, idOrSlug);
    const notFound = IntegrationErrors.integrationNotFound(idOrSlug, 'integration_id');
    if (!integration) throw notFound;
    if (!(await isGranted(manager, integration, workspaceId))) {
      // A workspace principal cannot tell an integration it may not use from a missing one.
      if (!principal.organisationWide) throw notFound;
      throw IntegrationErrors.integrationNotGranted(integration.slug);
    }
    if (integration.status !== 'active') throw IntegrationErrors.integrationArchived(integration.slug);
    return integration;
  }

  private async slugFor(
    manager: EntityManager,
    workspaceId: string,
    requested: string | undefined,
    name: string,
  ) {
    if (requested) {
      if (await providerSlugTaken(manager, workspaceId, requested))
        throw IntegrationErrors.providerSlugTaken(requested);
      return requested;
    }
    return uniqueProviderSlug(manager, workspaceId, name);
  }

  /**
   * A provider by slug as `principal` may see it. Workspace principals look in their workspace;
   * organisation-wide ones in `workspace_id` when given, else anywhere in the organisation as
   * long as the slug names one provider.
   */
  private async findRow(
    manager: EntityManager,
    principal: Principal,
    slug: string,
    workspaceRef: string | undefined,
    kind: Kind,
  ): Promise<ProviderEntity> {
    const notFound = () =>
      kind === 'provider'
        ? IntegrationErrors.providerNotFound(slug)
        : IntegrationErrors.virtualKeyNotFound(slug);
    const repository = manager.getRepository(ProviderEntity);
    let workspaceId: string | null = principal.organisationWide ? null : (principal.workspaceId ?? '');
    if (workspaceRef) workspaceId = (await this.workspaces.findVisible(principal, workspaceRef, manager)).id;
    const rows = await repository.find({
      where: {
        organisation_id: principal.organisationId,
        slug,
        ...(workspaceId !== null ? { workspace_id: workspaceId } : {}),
      },
      take: 2,
    });
    if (rows.length === 0) throw notFound();
    if (rows.length > 1) {
      throw IntegrationErrors.invalidField(
        'workspace_id',
        `is required: '${slug}' names providers in several workspaces`,
        'isDefined',
      );
    }
    return rows[0];
  }

  private newRow(
    principal: Principal,
    workspaceId: string,
    kind: ProviderKind,
    fields: Partial<ProviderEntity>,
  ): ProviderEntity {
    return this.dataSource.getRepository(ProviderEntity).create({
      id: randomUUID(),
      organisation_id: principal.organisationId,
      workspace_id: workspaceId,
      kind,
      integration_id: null,
      key_encrypted: null,
      key_mask: null,
      configurations: {},
      secret_configurations: null,
      secret_mappings: [],
      status: 'active',
      is_default: false,
      created_by_user_id: principal.user?.id ?? null,
      created_by_key_id: principal.apiKey?.id ?? null,
      ...fields,
    });
  }

  private async integrationSlugs(
    manager: EntityManager,
    rows: ProviderEntity[],
  ): Promise<Map<string, string>> {
    const ids = [...new Set(rows.map((row) => row.integration_id).filter((id): id is string => Boolean(id)))];
    if (ids.length === 0) return new Map();
    const integrations = await manager
      .getRepository(IntegrationEntity)
      .find({ where: { id: In(ids) }, select: { id: true, slug: true } });
    return new Map(integrations.map((integration) => [integration.id, integration.slug]));
  }

  /** The rows whose own inline budget is used up in its current period (none without policies). */
  private async exhaustedBudgets(rows: ProviderEntity[]): Promise<ReadonlySet<string>> {
    const owners = rows
      .filter((row) => row.status === 'active' && row.usage_limits)
      .map((row) => ({ id: row.id, usageLimits: row.usage_limits }));
    if (owners.length === 0 || !this.usageStatus) return new Set();
    return this.usageStatus.exhausted('provider', owners);
  }

  private async answer(row: ProviderEntity, kind: Kind) {
    const slugs = await this.integrationSlugs(this.dataSource.manager, [row]);
    const exhausted = await this.exhaustedBudgets([row]);
    return this.respond(row, kind, slugs.get(row.integration_id ?? '') ?? null, exhausted.has(row.id));
  }

  private respond(row: ProviderEntity, kind: Kind, integrationSlug: string | null, budgetExhausted: boolean) {
    if (kind === 'provider') return toProviderResponse(row, integrationSlug, budgetExhausted);
    return toVirtualKeyResponse(row, integrationSlug, openSettings(this.cipher, row).secret, budgetExhausted);
  }
}
