import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import {
  AppError,
  CommonErrors,
  InvalidationBus,
  PageQueryDto,
  Principal,
  isUuid,
  listEnvelope,
  slugify,
  toPage,
} from '@switchboard/common';
import { insertable } from '@switchboard/database';
import { WorkspacesService } from '@switchboard/identity';
import { CONFIGS_TOPIC, ConfigStore } from './config-store';
import type { GatewayConfig } from './config.types';
import { validateConfig } from './config-validation';
import { ConfigErrors } from './configs.errors';
import {
  maskedSecretPath,
  toConfigListItem,
  toConfigResponse,
  toConfigVersionResponse,
} from './configs.mapper';
import { CreateConfigDto, ListConfigsQueryDto, UpdateConfigDto } from './dto/config.dto';
import { ConfigVersionEntity } from './entities/config-version.entity';
import { ConfigEntity } from './entities/config.entity';

function flag(...values: (number | boolean | undefined)[]): boolean | undefined {
  const value = values.find((candidate) => candidate !== undefined);
  return value === undefined ? undefined : value === 1 || value === true;
}

function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driver = error.driverError as { code?: string } | undefined;
  return driver?.code === '23505' || driver?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Validates a config for storage: the schema, and no masked secret sent back from a read. */
function checkConfig(input: Record<string, unknown>): GatewayConfig {
  const config = validateConfig(input);
  const masked = maskedSecretPath(config);
  if (masked)
    throw ConfigErrors.invalid(
      masked,
      'holds a masked value from a read: send the full secret',
      'masked_secret',
    );
  return config;
}

@Injectable()
export class ConfigsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workspaces: WorkspacesService,
    private readonly store: ConfigStore,
    private readonly bus: InvalidationBus,
  ) {}

  async create(principal: Principal, dto: CreateConfigDto) {
    const config = checkConfig(dto.config);
    const isDefault = flag(dto.isDefault, dto.is_default) ?? false;
    const entity = await this.write(async (manager) => {
      const target = principal.organisationWide
        ? dto.workspace_id
        : (dto.workspace_id ?? principal.workspaceId);
      if (!target) throw ConfigErrors.workspaceRequired();
      const workspace = await this.workspaces.findVisible(principal, target, manager);
      if (workspace.status === 'archived') throw ConfigErrors.workspaceArchived();
      const configs = manager.getRepository(ConfigEntity);
      let slug = dto.slug;
      if (slug) {
        if (await configs.exists({ where: { organisation_id: principal.organisationId, slug } }))
          throw ConfigErrors.slugTaken(slug);
      } else {
        do slug = `pc-${slugify(dto.name).slice(0, 16)}-${randomBytes(3).toString('hex')}`;
        while (await configs.exists({ where: { organisation_id: principal.organisationId, slug } }));
      }
      if (isDefault) await this.clearDefault(manager, workspace.id);
      const userId = principal.user?.id ?? null;
      const created = configs.create({
        id: randomUUID(),
        organisation_id: principal.organisationId,
        workspace_id: workspace.id,
        name: dto.name,
        slug,
        config,
        is_default: isDefault,
        status: 'active',
        version_id: randomUUID(),
        version: 1,
        owner_id: userId,
        updated_by: userId,
      });
      await configs.insert(insertable(created));
      await this.insertVersion(manager, created, userId);
      return configs.findOneByOrFail({ id: created.id });
    });
    this.changed(entity);
    return { success: true, data: toConfigResponse(entity) };
  }

  async list(principal: Principal, query: ListConfigsQueryDto) {
    const { skip, take } = toPage(query);
    const where: Record<string, unknown> = { organisation_id: principal.organisationId };
    if (query.workspace_id)
      where.workspace_id = (await this.workspaces.findVisible(principal, query.workspace_id)).id;
    else if (!principal.organisationWide) where.workspace_id = principal.workspaceId ?? '';
    if (query.status) where.status = query.status;
    const [rows, total] = await this.dataSource
      .getRepository(ConfigEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    return { ...listEnvelope(rows.map(toConfigListItem), total), success: true };
  }

  async get(principal: Principal, ref: string) {
    return {
      success: true,
      data: toConfigResponse(await this.findVisible(this.dataSource.manager, principal, ref)),
    };
  }

  async update(principal: Principal, ref: string, dto: UpdateConfigDto) {
    const config = dto.config !== undefined ? checkConfig(dto.config) : undefined;
    const requestedDefault = flag(dto.isDefault, dto.is_default);
    const entity = await this.write(async (manager) => {
      const current = await this.findVisible(manager, principal, ref);
      const status = dto.status ?? current.status;
      let isDefault = requestedDefault ?? current.is_default;
      if (status === 'archived' && isDefault) {
        // Archiving the default stops it being the default; asking for both at once is a mistake.
        if (requestedDefault === true) throw ConfigErrors.defaultMustBeActive();
        isDefault = false;
      }
      if (isDefault && !current.is_default) await this.clearDefault(manager, current.workspace_id);
      const userId = principal.user?.id ?? null;
      if (dto.name !== undefined) current.name = dto.name;
      if (config !== undefined) current.config = config;
      current.status = status;
      current.is_default = isDefault;
      current.version += 1;
      current.version_id = randomUUID();
      current.updated_by = userId;
      await manager.getRepository(ConfigEntity).save(current);
      await this.insertVersion(manager, current, userId);
      return manager.getRepository(ConfigEntity).findOneByOrFail({ id: current.id });
    });
    this.changed(entity);
    return { success: true, data: toConfigResponse(entity) };
  }

  async remove(principal: Principal, ref: string) {
    const removed = await this.write(async (manager) => {
      const config = await this.findVisible(manager, principal, ref);
      await manager.getRepository(ConfigVersionEntity).delete({ config_id: config.id });
      await manager.getRepository(ConfigEntity).delete({ id: config.id });
      return config;
    });
    this.store.applyChange({ kind: 'remove', id: removed.id, workspaceId: removed.workspace_id });
    this.bus.publish(CONFIGS_TOPIC);
    return { success: true, object: 'config' as const, id: removed.id, deleted: true };
  }

  async versions(principal: Principal, ref: string, query: PageQueryDto) {
    const config = await this.findVisible(this.dataSource.manager, principal, ref);
    const { skip, take } = toPage(query);
    const [rows, total] = await this.dataSource
      .getRepository(ConfigVersionEntity)
      .findAndCount({ where: { config_id: config.id }, order: { version: 'DESC' }, skip, take });
    return listEnvelope(
      rows.map((version) => toConfigVersionResponse(config, version)),
      total,
    );
  }

  /** A config of the caller's organisation by id or slug; another workspace's reads as missing. */
  private async findVisible(
    manager: EntityManager,
    principal: Principal,
    ref: string,
  ): Promise<ConfigEntity> {
    const where = isUuid(ref)
      ? [
          { organisation_id: principal.organisationId, id: ref },
          { organisation_id: principal.organisationId, slug: ref },
        ]
      : [{ organisation_id: principal.organisationId, slug: ref }];
    const config = await manager.getRepository(ConfigEntity).findOne({ where });
    if (!config) throw ConfigErrors.notFound(ref);
    if (!principal.organisationWide && config.workspace_id !== principal.workspaceId)
      throw ConfigErrors.notFound(ref);
    return config;
  }

  private async clearDefault(manager: EntityManager, workspaceId: string): Promise<void> {
    await manager
      .getRepository(ConfigEntity)
      .update({ workspace_id: workspaceId, is_default: true }, { is_default: false });
  }

  private async insertVersion(
    manager: EntityManager,
    config: ConfigEntity,
    userId: string | null,
  ): Promise<void> {
    const version = manager.getRepository(ConfigVersionEntity).create({
      id: config.version_id,
      config_id: config.id,
      organisation_id: config.organisation_id,
      workspace_id: config.workspace_id,
      version: config.version,
      name: config.name,
      config: config.config,
      is_default: config.is_default,
      status: config.status,
      created_by: userId,
    });
    await manager.getRepository(ConfigVersionEntity).insert(insertable(version));
  }

  /** One transaction; a unique-index race (slug, default) answers 409 instead of 500. */
  private async write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(work);
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (isUniqueViolation(error))
        throw CommonErrors.conflict(
          'Another change to the same configs happened at the same time; try again',
        );
      throw error;
    }
  }

  /** This replica sees the change at once; the others on the invalidation message. */
  private changed(entity: ConfigEntity): void {
    this.store.applyChange({ kind: 'upsert', entity });
    this.bus.publish(CONFIGS_TOPIC);
  }
}
