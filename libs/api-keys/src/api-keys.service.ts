import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, In, LessThan } from 'typeorm';
import { KEY_CAPABILITIES, isAdminKeyType, managesWorkspace, validateKeyScopes } from '@switchboard/access';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import {
  ApiKeyType,
  DomainEvents,
  INLINE_USAGE_STATUS,
  InlineUsageStatus,
  Principal,
  listEnvelope,
  toPage,
} from '@switchboard/common';
import { insertable } from '@switchboard/database';
import { IdentityLookupService, WorkspacesService } from '@switchboard/identity';
import { ApiKeyEntity } from './entities/api-key.entity';
import { CreateApiKeyDto, ListApiKeysQueryDto, RotateApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto';
import { ApiKeyErrors } from './api-keys.errors';
import { toApiKeyResponse } from './api-keys.mapper';
import { generateRawKey, hashKey, maskKey } from './key-material';

const DAY_MS = 24 * 60 * 60 * 1000;

const NO_BUDGETS_COUNTED: InlineUsageStatus = {
  exhausted: async () => new Set<string>(),
  reset: async () => undefined,
};

export function toKeyType(type: string, subType: string): ApiKeyType {
  if ((type === 'organisation' || type === 'workspace') && (subType === 'service' || subType === 'user')) {
    return `${type}-${subType}`;
  }
  throw ApiKeyErrors.badType(type, subType);
}

@Injectable()
export class ApiKeysService implements OnModuleInit {
  private readonly usageStatus: InlineUsageStatus;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly workspaces: WorkspacesService,
    private readonly identity: IdentityLookupService,
    private readonly events: DomainEvents,
    @Optional() @Inject(INLINE_USAGE_STATUS) usageStatus?: InlineUsageStatus,
  ) {
    this.usageStatus = usageStatus ?? NO_BUDGETS_COUNTED;
  }

  onModuleInit(): void {
    // A departed user's keys go with them, in the same transaction as the removal.
    this.events.on('user.deleted', async ({ manager, organisationId, userId }) => {
      await manager.getRepository(ApiKeyEntity).delete({ organisation_id: organisationId, user_id: userId });
    });
    this.events.on('member.removed', async ({ manager, workspaceId, userId }) => {
      await manager
        .getRepository(ApiKeyEntity)
        .delete({ workspace_id: workspaceId, user_id: userId, type: 'workspace-user' });
    });
  }

  async create(principal: Principal, type: string, subType: string, dto: CreateApiKeyDto) {
    const keyType = toKeyType(type, subType);
    return this.dataSource.transaction(async (manager) => {
      const raw = generateRawKey();
      const entity = await this.prepareNewKey(manager, principal, keyType, dto);
      entity.key_hash = hashKey(raw);
      entity.key_mask = maskKey(raw);
      await manager.getRepository(ApiKeyEntity).insert(insertable(entity));
      return { ...toApiKeyResponse(entity), key: raw };
    });
  }

  /** The first admin key, at first start: the raw value is the operator's or a generated one. */
  async createBootstrapKey(manager: EntityManager, organisationId: string, ownerId: string, raw: string) {
    const entity = manager.getRepository(ApiKeyEntity).create({
      id: randomUUID(),
      organisation_id: organisationId,
      workspace_id: null,
      user_id: null,
      type: 'organisation-service',
      name: 'Bootstrap admin key',
      description: 'Created at first start',
      key_hash: hashKey(raw),
      key_mask: maskKey(raw),
      scopes: [...KEY_CAPABILITIES['organisation-service']],
      creation_mode: 'auto',
      created_by_user_id: ownerId,
    });
    await manager.getRepository(ApiKeyEntity).insert(insertable(entity));
    return entity.id;
  }

  /** Keys for a user who just accepted an invite: one workspace user key per granted workspace. */
  async createOnboardingKeys(
    manager: EntityManager,
    organisationId: string,
    userId: string,
    workspaces: { workspace_id: string; role: 'admin' | 'manager' | 'member' }[],
    scopes: string[] | null,
    organisationRole: 'admin' | 'member' | 'owner',
  ) {
    const created: { id: string; key: string; type: ApiKeyType; workspace_id: string | null }[] = [];
    const make = async (keyType: ApiKeyType, workspaceId: string | null, keyScopes: string[]) => {
      const raw = generateRawKey();
      const entity = manager.getRepository(ApiKeyEntity).create({
        id: randomUUID(),
        organisation_id: organisationId,
        workspace_id: workspaceId,
        user_id: userId,
        type: keyType,
        name: workspaceId ? 'Personal workspace key' : 'Personal admin key',
        description: 'Created when the invite was accepted',
        key_hash: hashKey(raw),
        key_mask: maskKey(raw),
        scopes: keyScopes,
        creation_mode: 'auto',
        expires_at: workspaceId ? await this.defaultExpiry(organisationId, workspaceId) : null,
      });
      await manager.getRepository(ApiKeyEntity).insert(insertable(entity));
      created.push({ id: entity.id, key: raw, type: keyType, workspace_id: workspaceId });
    };
    if (organisationRole !== 'member')
      await make('organisation-user', null, [...KEY_CAPABILITIES['organisation-user']]);
    for (const workspace of workspaces)
      await make('workspace-user', workspace.workspace_id, scopes ?? [...KEY_CAPABILITIES['workspace-user']]);
    return created;
  }

  async list(principal: Principal, query: ListApiKeysQueryDto) {
    const { skip, take } = toPage(query);
    const where: Record<string, unknown> = { organisation_id: principal.organisationId };
    if (query.workspace_id) {
      where.workspace_id = (await this.workspaces.findVisible(principal, query.workspace_id)).id;
    } else if (!principal.organisationWide) {
      where.workspace_id = principal.workspaceId ?? '';
    }
    // Admin keys are visible only to those who may manage them.
    if (!principal.permissions.has('admin_api_keys.manage')) {
      where.type = In(['workspace-service', 'workspace-user']);
    }
    const [rows, total] = await this.dataSource
      .getRepository(ApiKeyEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    return listEnvelope(await this.respond(rows), total);
  }

  async get(principal: Principal, id: string) {
    const [key] = await this.respond([await this.findVisible(this.dataSource.manager, principal, id)]);
    return key;
  }

  async update(principal: Principal, id: string, dto: UpdateApiKeyDto) {
    const updated = await this.dataSource.transaction(async (manager) => {
      const key = await this.findVisible(manager, principal, id);
      if (dto.scopes !== undefined) {
        validateKeyScopes(
          dto.scopes,
          key.type,
          principal.organisationWide ? undefined : principal.permissions,
        );
        key.scopes = [...new Set(dto.scopes)];
      }
      if (dto.expires_at !== undefined) {
        key.expires_at = await this.checkExpiry(principal, key.type, key.workspace_id, dto.expires_at);
        if (key.status === 'expired' && (key.expires_at === null || key.expires_at > new Date()))
          key.status = 'active';
      }
      if (dto.name !== undefined) key.name = dto.name;
      if (dto.description !== undefined) key.description = dto.description;
      if (dto.defaults !== undefined) key.defaults = dto.defaults;
      if (dto.rate_limits !== undefined) key.rate_limits = dto.rate_limits;
      if (dto.usage_limits !== undefined)
        key.usage_limits = dto.usage_limits as Record<string, unknown> | null;
      if (dto.alert_emails !== undefined) key.alert_emails = dto.alert_emails;
      await manager.getRepository(ApiKeyEntity).save(key);
      await this.events.emit('principals.changed', { reason: 'api key updated' });
      return key;
    });
    // After the commit: the budget status is read against the limits just saved.
    const [response] = await this.respond([updated]);
    return response;
  }

  async remove(principal: Principal, id: string) {
    return this.dataSource.transaction(async (manager) => {
      const key = await this.findVisible(manager, principal, id);
      await manager.getRepository(ApiKeyEntity).delete({ id: key.id });
      await this.events.emit('principals.changed', { reason: 'api key deleted' });
      return { object: 'api-key' as const, id: key.id, deleted: true };
    });
  }

  /** A new secret; the previous one keeps working for the transition period, then stops. */
  async rotate(principal: Principal, id: string, dto: RotateApiKeyDto) {
    const { key, raw } = await this.dataSource.transaction(async (manager) => {
      const key = await this.findVisible(manager, principal, id);
      const raw = generateRawKey();
      const transition = dto.key_transition_period_ms ?? this.config.keyRotationTransitionMs;
      key.previous_key_hash = transition > 0 ? key.key_hash : null;
      key.previous_key_expires_at = transition > 0 ? new Date(Date.now() + transition) : null;
      key.key_hash = hashKey(raw);
      key.key_mask = maskKey(raw);
      key.last_rotated_at = new Date();
      await manager.getRepository(ApiKeyEntity).save(key);
      await this.events.emit('principals.changed', { reason: 'api key rotated' });
      return { key, raw };
    });
    // A new secret, the same key: its budget stays as used as it was.
    const [response] = await this.respond([key]);
    return {
      ...response,
      key: raw,
      previous_key_expires_at: key.previous_key_expires_at ? key.previous_key_expires_at.toISOString() : null,
    };
  }

  /** Marks keys past their expiry; idempotent, so a second run changes nothing. */
  async markExpired(now = new Date()): Promise<number> {
    const result = await this.dataSource
      .getRepository(ApiKeyEntity)
      .update({ status: 'active', expires_at: LessThan(now) }, { status: 'expired' });
    if ((result.affected ?? 0) > 0)
      await this.events.emit('principals.changed', { reason: 'api keys expired' });
    return result.affected ?? 0;
  }

  /** Where keys belong, for records made before a principal existed (a refused authentication). */
  async ownersOf(
    ids: string[],
  ): Promise<Map<string, { organisationId: string; workspaceId: string | null }>> {
    const owners = new Map<string, { organisationId: string; workspaceId: string | null }>();
    if (ids.length === 0) return owners;
    const keys = await this.dataSource.getRepository(ApiKeyEntity).find({
      where: { id: In(ids) },
      select: { id: true, organisation_id: true, workspace_id: true },
    });
    for (const key of keys)
      owners.set(key.id, { organisationId: key.organisation_id, workspaceId: key.workspace_id });
    return owners;
  }

  /** For authentication on a cold cache: the key whose current or transitional hash matches. */
  async findByHash(hash: string): Promise<{ key: ApiKeyEntity; viaPrevious: boolean } | null> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const current = await repository.findOne({ where: { key_hash: hash } });
    if (current) return { key: current, viaPrevious: false };
    const previous = await repository.findOne({ where: { previous_key_hash: hash } });
    return previous ? { key: previous, viaPrevious: true } : null;
  }

  /** Responses for `keys`, `exhausted` where an inline budget of the key is used up. */
  private async respond(keys: ApiKeyEntity[]) {
    const owners = keys
      .filter((key) => key.status === 'active' && key.usage_limits)
      .map((key) => ({ id: key.id, usageLimits: key.usage_limits }));
    const exhausted = owners.length > 0 ? await this.usageStatus.exhausted('api_key', owners) : null;
    return keys.map((key) => toApiKeyResponse(key, exhausted?.has(key.id) ?? false));
  }

  private async findVisible(manager: EntityManager, principal: Principal, id: string): Promise<ApiKeyEntity> {
    const key = await manager
      .getRepository(ApiKeyEntity)
      .findOne({ where: { organisation_id: principal.organisationId, id } })
      .catch(() => null);
    if (!key) throw ApiKeyErrors.notFound(id);
    if (isAdminKeyType(key.type) && !principal.permissions.has('admin_api_keys.manage'))
      throw ApiKeyErrors.notFound(id);
    if (!principal.organisationWide && key.workspace_id !== principal.workspaceId)
      throw ApiKeyErrors.notFound(id);
    return key;
  }

  private async prepareNewKey(
    manager: EntityManager,
    principal: Principal,
    keyType: ApiKeyType,
    dto: CreateApiKeyDto,
  ): Promise<ApiKeyEntity> {
    let workspaceId: string | null = null;
    let userId: string | null = null;
    if (isAdminKeyType(keyType)) {
      if (!principal.permissions.has('admin_api_keys.manage')) throw ApiKeyErrors.adminKeysForbidden();
      if (dto.workspace_id) throw ApiKeyErrors.workspaceNotAllowed();
    } else {
      const target = dto.workspace_id ?? principal.workspaceId;
      if (!target) throw ApiKeyErrors.workspaceRequired();
      const workspace = await this.workspaces.findVisible(principal, target, manager);
      if (workspace.status === 'archived') throw ApiKeyErrors.workspaceArchived();
      workspaceId = workspace.id;
    }

    if (keyType.endsWith('-user')) {
      userId = dto.user_id ?? principal.user?.id ?? null;
      if (!userId) throw ApiKeyErrors.userRequired();
      const onBehalf = userId !== principal.user?.id;
      if (
        onBehalf &&
        !principal.organisationWide &&
        !managesWorkspace(principal.workspaceRole) &&
        principal.user
      ) {
        throw ApiKeyErrors.otherUsersKey();
      }
      const facts = await this.identity.facts(principal.organisationId, userId, workspaceId);
      if (!facts.user) throw ApiKeyErrors.userNotFound(userId);
      if (keyType === 'organisation-user' && facts.user.role === 'member')
        throw ApiKeyErrors.userNotAdmin(userId);
      if (keyType === 'workspace-user' && !facts.workspaceRole && facts.user.role === 'member') {
        throw ApiKeyErrors.userNotMember(userId);
      }
    } else if (dto.user_id) {
      throw ApiKeyErrors.userIdNotAllowed();
    }

    validateKeyScopes(dto.scopes, keyType, principal.organisationWide ? undefined : principal.permissions);

    let expiresAt =
      dto.expires_at !== undefined
        ? await this.checkExpiry(principal, keyType, workspaceId, dto.expires_at)
        : null;
    if (keyType === 'workspace-user' && workspaceId && userId) {
      const policy = await this.identity.apiKeyPolicy(principal.organisationId, workspaceId);
      if (policy.max_user_keys_per_user !== null) {
        const count = await manager.getRepository(ApiKeyEntity).count({
          where: { workspace_id: workspaceId, user_id: userId, type: 'workspace-user', status: 'active' },
        });
        if (count >= policy.max_user_keys_per_user)
          throw ApiKeyErrors.tooManyUserKeys(policy.max_user_keys_per_user);
      }
      if (!expiresAt && dto.expires_at !== null)
        expiresAt = await this.defaultExpiry(principal.organisationId, workspaceId);
    }

    return manager.getRepository(ApiKeyEntity).create({
      id: randomUUID(),
      organisation_id: principal.organisationId,
      workspace_id: workspaceId,
      user_id: userId,
      type: keyType,
      name: dto.name,
      description: dto.description ?? null,
      previous_key_hash: null,
      previous_key_expires_at: null,
      status: 'active',
      scopes: [...new Set(dto.scopes)],
      defaults: dto.defaults ?? null,
      rate_limits: dto.rate_limits ?? null,
      usage_limits: (dto.usage_limits as Record<string, unknown> | undefined) ?? null,
      alert_emails: dto.alert_emails ?? null,
      expires_at: expiresAt,
      creation_mode: 'api',
      created_by_user_id: principal.user?.id ?? null,
      created_by_key_id: principal.apiKey?.id ?? null,
      last_rotated_at: null,
    });
  }

  /** `null` asks for a key that never expires, which a workspace maximum forbids for user keys. */
  private async checkExpiry(
    principal: Principal,
    keyType: ApiKeyType,
    workspaceId: string | null,
    value: string | null,
  ): Promise<Date | null> {
    const expiresAt = value === null ? null : new Date(value);
    if (expiresAt && expiresAt <= new Date()) throw ApiKeyErrors.expiryInPast();
    if (keyType === 'workspace-user' && workspaceId) {
      const policy = await this.identity.apiKeyPolicy(principal.organisationId, workspaceId);
      if (
        policy.max_expiry_days !== null &&
        (expiresAt === null || expiresAt.getTime() > Date.now() + policy.max_expiry_days * DAY_MS)
      ) {
        throw ApiKeyErrors.expiryTooLate(policy.max_expiry_days);
      }
    }
    return expiresAt;
  }

  private async defaultExpiry(organisationId: string, workspaceId: string): Promise<Date | null> {
    const policy = await this.identity.apiKeyPolicy(organisationId, workspaceId);
    const days = policy.default_expiry_days ?? policy.max_expiry_days;
    return days ? new Date(Date.now() + days * DAY_MS) : null;
  }
}
