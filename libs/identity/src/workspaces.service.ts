import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, In, Raw } from 'typeorm';
import { DomainEvents, Principal, isUuid, listEnvelope, slugify, toPage } from '@switchboard/common';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { WorkspaceEntity } from './entities/workspace.entity';
import { UserEntity } from './entities/user.entity';
import { CreateWorkspaceDto, ListWorkspacesQueryDto, UpdateWorkspaceDto } from './dto/workspace.dto';
import { IdentityErrors } from './identity.errors';
import { toWorkspaceResponse } from './identity.mapper';

/**
 * The fields a partial update actually sent: validated DTO instances carry the omitted optional
 * fields as `undefined`, which a plain spread would write over the stored values.
 */
function definedFields<T extends object>(dto: T): Partial<T> {
  return Object.fromEntries(Object.entries(dto).filter(([, value]) => value !== undefined)) as Partial<T>;
}

@Injectable()
export class WorkspacesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: DomainEvents,
  ) {}

  /**
   * The workspace `idOrSlug` as `principal` may see it. A workspace key or member asking for
   * another workspace gets the same 404 as for one that does not exist.
   */
  async findVisible(
    principal: Principal,
    idOrSlug: string,
    manager?: EntityManager,
  ): Promise<WorkspaceEntity> {
    const repository = (manager ?? this.dataSource.manager).getRepository(WorkspaceEntity);
    const where = isUuid(idOrSlug)
      ? [
          { organisation_id: principal.organisationId, id: idOrSlug },
          { organisation_id: principal.organisationId, slug: idOrSlug },
        ]
      : [{ organisation_id: principal.organisationId, slug: idOrSlug }];
    const workspace = await repository.findOne({ where });
    if (!workspace) throw IdentityErrors.workspaceNotFound(idOrSlug);
    if (!principal.organisationWide && principal.workspaceId !== workspace.id) {
      throw IdentityErrors.workspaceNotFound(idOrSlug);
    }
    return workspace;
  }

  async create(principal: Principal, dto: CreateWorkspaceDto) {
    const afterCommit: (() => Promise<void>)[] = [];
    const created = await this.dataSource.transaction(async (manager) => {
      const workspaces = manager.getRepository(WorkspaceEntity);
      const slug = dto.slug ?? (await this.uniqueSlug(manager, principal.organisationId, dto.name));
      if (await workspaces.exists({ where: { organisation_id: principal.organisationId, slug } })) {
        throw IdentityErrors.slugTaken(slug);
      }
      const workspace = workspaces.create({
        id: randomUUID(),
        organisation_id: principal.organisationId,
        name: dto.name,
        slug,
        description: dto.description ?? null,
        status: 'active',
        is_default: false,
        defaults: dto.defaults ?? null,
        usage_limits: dto.usage_limits ?? [],
        rate_limits: dto.rate_limits ?? [],
        settings: dto.api_key_policy ? { api_keys: dto.api_key_policy } : {},
      });
      await workspaces.insert(workspace);
      if (dto.users && dto.users.length > 0) {
        const unique = [...new Set(dto.users)];
        const found = await manager
          .getRepository(UserEntity)
          .find({ where: { organisation_id: principal.organisationId, id: In(unique) } });
        const missing = unique.find((id) => !found.some((user) => user.id === id));
        if (missing) throw IdentityErrors.userNotFound(missing);
        await manager.getRepository(WorkspaceMemberEntity).insert(
          unique.map((userId) => ({
            id: randomUUID(),
            organisation_id: principal.organisationId,
            workspace_id: workspace.id,
            user_id: userId,
            role: 'member' as const,
          })),
        );
      }
      // Integrations granted to every workspace give this one its default providers, atomically.
      await this.events.emit('workspace.created', {
        manager,
        principal,
        workspaceId: workspace.id,
        afterCommit: (task) => afterCommit.push(task),
      });
      const saved = await workspaces.findOneByOrFail({ id: workspace.id });
      return toWorkspaceResponse(saved);
    });
    for (const task of afterCommit) await task();
    return created;
  }

  async list(principal: Principal, query: ListWorkspacesQueryDto) {
    const statuses = (query.status ?? 'active').split(',') as ('active' | 'archived')[];
    if (statuses.includes('archived') && !principal.organisationWide)
      throw IdentityErrors.archivedListForbidden();
    const { skip, take } = toPage(query);
    const where: Record<string, unknown> = {
      organisation_id: principal.organisationId,
      status: In(statuses),
    };
    if (query.exact_name) where.name = query.exact_name;
    else if (query.name) {
      // Case-insensitive on both dialects (SQLite's LIKE ignores ASCII case, PostgreSQL's does not),
      // and with an explicit ESCAPE, which SQLite's LIKE lacks by default, so `%` and `_` match literally.
      const pattern = `%${query.name.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.name = Raw((column) => `LOWER(${column}) LIKE :namePattern ESCAPE '\\'`, {
        namePattern: pattern,
      });
    }
    if (!principal.organisationWide) where.id = principal.workspaceId ?? '';
    const [rows, total] = await this.dataSource
      .getRepository(WorkspaceEntity)
      .findAndCount({ where, order: { created_at: 'ASC', id: 'ASC' }, skip, take });
    return listEnvelope(rows.map(toWorkspaceResponse), total);
  }

  async get(principal: Principal, idOrSlug: string) {
    return toWorkspaceResponse(await this.findVisible(principal, idOrSlug));
  }

  async update(principal: Principal, idOrSlug: string, dto: UpdateWorkspaceDto) {
    return this.dataSource.transaction(async (manager) => {
      const workspace = await this.findVisible(principal, idOrSlug, manager);
      if (dto.status === 'archived' && workspace.is_default) throw IdentityErrors.defaultWorkspace();
      if (dto.status !== undefined && !principal.organisationWide)
        throw IdentityErrors.statusChangeForbidden();
      if (dto.name !== undefined) workspace.name = dto.name;
      if (dto.description !== undefined) workspace.description = dto.description;
      if (dto.defaults !== undefined) workspace.defaults = dto.defaults;
      if (dto.usage_limits !== undefined) workspace.usage_limits = dto.usage_limits;
      if (dto.rate_limits !== undefined) workspace.rate_limits = dto.rate_limits;
      if (dto.api_key_policy !== undefined) {
        workspace.settings = {
          ...workspace.settings,
          api_keys: { ...workspace.settings.api_keys, ...definedFields(dto.api_key_policy) },
        };
      }
      const archiving = dto.status === 'archived' && workspace.status !== 'archived';
      if (dto.status !== undefined) workspace.status = dto.status;
      await manager.getRepository(WorkspaceEntity).save(workspace);
      if (archiving) await this.events.emit('workspace.archived', { manager, workspaceId: workspace.id });
      // Principals carry the workspace's status and inline limits.
      if (dto.status !== undefined || dto.usage_limits !== undefined || dto.rate_limits !== undefined)
        await this.events.emit('principals.changed', { reason: 'workspace status or limits' });
      return toWorkspaceResponse(workspace);
    });
  }

  /**
   * Deleting archives: logs, analytics and audit records keep pointing at the workspace, and its
   * keys stop working at once.
   */
  async archive(principal: Principal, idOrSlug: string) {
    const archived = await this.update(principal, idOrSlug, { status: 'archived' });
    return { object: 'workspace' as const, id: archived.id, deleted: true };
  }

  private async uniqueSlug(manager: EntityManager, organisationId: string, name: string): Promise<string> {
    const base = slugify(name);
    const repository = manager.getRepository(WorkspaceEntity);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const candidate = attempt === 0 ? base : `${base}-${randomUUID().slice(0, 6)}`;
      if (!(await repository.exists({ where: { organisation_id: organisationId, slug: candidate } })))
        return candidate;
    }
    return `${base}-${randomUUID()}`;
  }
}
