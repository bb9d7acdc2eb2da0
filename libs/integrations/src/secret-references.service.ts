import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, Raw } from 'typeorm';
import { Principal, isUuid, listEnvelope, slugify, toPage } from '@switchboard/common';
import { WorkspacesService } from '@switchboard/identity';
import {
  SecretCipher,
  SecretManagerType,
  SecretResolver,
  maskSecretAuthConfig,
  mergeSecretAuthConfig,
  validateSecretLocation,
  validateSecretReferenceConfig,
} from '@switchboard/secrets';
import type { StoredSecretMapping } from './entities/integration.entity';
import { IntegrationEntity } from './entities/integration.entity';
import { ProviderEntity } from './entities/provider.entity';
import { SecretReferenceEntity } from './entities/secret-reference.entity';
import type { SecretMappingDto } from './dto/common.dto';
import {
  CreateSecretReferenceDto,
  ListSecretReferencesQueryDto,
  UpdateSecretReferenceDto,
} from './dto/secret-reference.dto';
import { IntegrationErrors } from './integrations.errors';
import { ProviderDirectory } from './provider-directory';
import { camelFieldOf, fieldsOf, snakeFieldOf } from './provider-settings';
import { parseTagsFilter, tagsMatch } from './tags';

/** Where a mapping's target field lives: integrations say `configurations.`, virtual keys `model_config.`. */
export interface MappingContext {
  provider: string;
  camel: boolean;
  /** The workspace that will use the mapped credential, when known at write time. */
  workspaceId: string | null;
}

/** `secret_mappings` as answered: virtual keys in their own (camelCase) spelling. */
export function mappingsForResponse(mappings: readonly StoredSecretMapping[], camel: boolean) {
  return mappings.map((mapping) => ({
    target_field:
      camel && mapping.target_field.startsWith('configurations.')
        ? `model_config.${camelFieldOf(mapping.target_field.slice('configurations.'.length))}`
        : mapping.target_field,
    secret_reference_id: mapping.secret_reference_id,
    secret_key: mapping.secret_key,
    value_format: mapping.value_format,
  }));
}

export function referenceAllows(reference: SecretReferenceEntity, workspaceId: string): boolean {
  return reference.allow_all_workspaces || reference.allowed_workspaces.includes(workspaceId);
}

@Injectable()
export class SecretReferencesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly workspaces: WorkspacesService,
    private readonly directory: ProviderDirectory,
    private readonly resolver: SecretResolver,
  ) {}

  async create(principal: Principal, dto: CreateSecretReferenceDto) {
    if (dto.organisation_id && dto.organisation_id !== principal.organisationId) {
      throw IntegrationErrors.invalidField('organisation_id', "must be the caller's organisation", 'equals');
    }
    const config = validateSecretReferenceConfig({
      managerType: dto.manager_type,
      authConfig: dto.auth_config,
      secretPath: dto.secret_path,
      secretKey: dto.secret_key,
    });
    if (dto.allow_all_workspaces === true && dto.allowed_workspaces) {
      throw IntegrationErrors.invalidField(
        'allowed_workspaces',
        'cannot be combined with allow_all_workspaces=true',
        'mutuallyExclusive',
      );
    }
    const created = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(SecretReferenceEntity);
      const slug = dto.slug ?? (await this.uniqueSlug(manager, principal.organisationId, dto.name));
      if (await repository.exists({ where: { organisation_id: principal.organisationId, slug } })) {
        throw IntegrationErrors.secretReferenceSlugTaken(slug);
      }
      const allowed = dto.allowed_workspaces
        ? await this.workspaceIds(manager, principal, dto.allowed_workspaces)
        : [];
      const entity = repository.create({
        id: randomUUID(),
        organisation_id: principal.organisationId,
        slug,
        name: dto.name,
        description: dto.description ?? null,
        manager_type: config.managerType,
        auth_config_encrypted: this.cipher.encryptJson(config.authConfig),
        secret_path: config.secretPath,
        secret_key: config.secretKey,
        allow_all_workspaces: allowed.length === 0,
        allowed_workspaces: allowed,
        tags: dto.tags ?? null,
        status: 'active',
        created_by_user_id: principal.user?.id ?? null,
        created_by_key_id: principal.apiKey?.id ?? null,
      });
      await repository.insert(entity);
      return repository.findOneByOrFail({ id: entity.id });
    });
    await this.directory.changed();
    return this.toDetail(created);
  }

  async list(principal: Principal, query: ListSecretReferencesQueryDto) {
    const { skip, take } = toPage(query);
    const where: Record<string, unknown> = { organisation_id: principal.organisationId };
    if (query.manager_type) where.manager_type = query.manager_type;
    const tags = parseTagsFilter(query.tags);
    if (tags) where.tags = tagsMatch(tags);
    if (query.search) {
      const pattern = `%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.name = Raw((column) => `LOWER(${column}) LIKE :searchPattern ESCAPE '\\'`, {
        searchPattern: pattern,
      });
    }
    const repository = this.dataSource.getRepository(SecretReferenceEntity);
    let rows: SecretReferenceEntity[];
    let total: number;
    if (principal.organisationWide) {
      [rows, total] = await repository.findAndCount({
        where,
        order: { created_at: 'DESC', id: 'ASC' },
        skip,
        take,
      });
    } else {
      // Allowed workspaces live in a JSON list: filter the organisation's references in memory.
      const all = await repository.find({ where, order: { created_at: 'DESC', id: 'ASC' } });
      const visible = all.filter((row) => referenceAllows(row, principal.workspaceId ?? ''));
      total = visible.length;
      rows = visible.slice(skip, skip + take);
    }
    return listEnvelope(
      rows.map((row) => this.toListItem(row)),
      total,
    );
  }

  async get(principal: Principal, idOrSlug: string) {
    return this.toDetail(await this.findVisible(this.dataSource.manager, principal, idOrSlug));
  }

  async update(principal: Principal, idOrSlug: string, dto: UpdateSecretReferenceDto) {
    const definedKeys = Object.entries(dto).filter(([, value]) => value !== undefined);
    if (definedKeys.length === 0) {
      throw IntegrationErrors.invalidField('body', 'names no field to update', 'isNotEmpty');
    }
    if (dto.allow_all_workspaces === true && dto.allowed_workspaces) {
      throw IntegrationErrors.invalidField(
        'allowed_workspaces',
        'cannot be combined with allow_all_workspaces=true',
        'mutuallyExclusive',
      );
    }
    const updated = await this.dataSource.transaction(async (manager) => {
      const reference = await this.findVisible(manager, principal, idOrSlug);
      const managerType = reference.manager_type as SecretManagerType;
      if (dto.auth_config !== undefined) {
        const stored = this.cipher.decryptJson<Record<string, unknown>>(reference.auth_config_encrypted);
        const merged = mergeSecretAuthConfig(managerType, stored, dto.auth_config);
        reference.auth_config_encrypted = this.cipher.encryptJson(merged);
      }
      if (dto.secret_path !== undefined || dto.secret_key !== undefined) {
        const location = validateSecretLocation(
          managerType,
          dto.secret_path ?? reference.secret_path,
          dto.secret_key !== undefined ? dto.secret_key : reference.secret_key,
        );
        reference.secret_path = location.secretPath;
        reference.secret_key = location.secretKey;
      }
      if (dto.allowed_workspaces) {
        reference.allowed_workspaces = await this.workspaceIds(manager, principal, dto.allowed_workspaces);
        reference.allow_all_workspaces = false;
      } else if (dto.allow_all_workspaces === true) {
        reference.allow_all_workspaces = true;
        reference.allowed_workspaces = [];
      } else if (dto.allow_all_workspaces === false) {
        if (reference.allowed_workspaces.length === 0) {
          throw IntegrationErrors.invalidField(
            'allowed_workspaces',
            'is required when allow_all_workspaces becomes false',
            'isDefined',
          );
        }
        reference.allow_all_workspaces = false;
      }
      if (dto.name !== undefined) reference.name = dto.name;
      if (dto.description !== undefined) reference.description = dto.description;
      if (dto.tags !== undefined) reference.tags = dto.tags;
      await manager.getRepository(SecretReferenceEntity).save(reference);
      return reference;
    });
    // Values read with the former configuration must not be served again.
    this.resolver.invalidate(updated.id);
    await this.directory.changed();
    return this.toDetail(updated);
  }

  async remove(principal: Principal, idOrSlug: string) {
    const removed = await this.dataSource.transaction(async (manager) => {
      const reference = await this.findVisible(manager, principal, idOrSlug);
      const users = await this.usersOf(manager, reference);
      if (users.length > 0) throw IntegrationErrors.secretReferenceInUse(idOrSlug, users);
      await manager.getRepository(SecretReferenceEntity).delete({ id: reference.id });
      return reference;
    });
    this.resolver.invalidate(removed.id);
    await this.directory.changed();
    return { object: 'secret-reference' as const, id: removed.id, slug: removed.slug, deleted: true };
  }

  /**
   * Checks `secret_mappings` of an integration or virtual key and answers them normalised: the
   * reference as its id, the target in canonical (snake_case) names, the value format settled.
   */
  async normaliseMappings(
    manager: EntityManager,
    principal: Principal,
    input: readonly SecretMappingDto[],
    context: MappingContext,
  ): Promise<StoredSecretMapping[]> {
    const fields = fieldsOf(context.provider);
    const prefix = context.camel ? 'model_config.' : 'configurations.';
    const seen = new Set<string>();
    const normalised: StoredSecretMapping[] = [];
    for (const [index, mapping] of input.entries()) {
      const param = `secret_mappings[${index}]`;
      let target: string;
      let field: string | null = null;
      if (mapping.target_field === 'key') {
        target = 'key';
      } else if (mapping.target_field.startsWith(prefix)) {
        const name = mapping.target_field.slice(prefix.length);
        field = context.camel ? (snakeFieldOf(name) ?? '') : name;
        if (!fields[field] || field === 'azure_deployment_config') {
          throw IntegrationErrors.invalidField(
            `${param}.target_field`,
            `'${mapping.target_field}' is not a credential field of provider '${context.provider}'`,
            'isTargetField',
          );
        }
        target = `configurations.${field}`;
      } else {
        throw IntegrationErrors.invalidField(
          `${param}.target_field`,
          `must be 'key' or '${prefix}<field>'`,
          'isTargetField',
        );
      }
      if (seen.has(target)) {
        throw IntegrationErrors.invalidField(
          `${param}.target_field`,
          'must be unique within secret_mappings',
          'unique',
        );
      }
      seen.add(target);
      const structured = field !== null && ['service_account', 'headers'].includes(fields[field].kind);
      const format = mapping.value_format ?? (structured ? 'json' : 'string');
      if (structured && format !== 'json') {
        throw IntegrationErrors.invalidField(
          `${param}.value_format`,
          `must be json for ${mapping.target_field}`,
          'equals',
        );
      }
      const reference = await this.findByIdOrSlug(
        manager,
        principal.organisationId,
        mapping.secret_reference_id,
      );
      if (!reference) {
        throw IntegrationErrors.secretReferenceNotFound(
          mapping.secret_reference_id,
          `${param}.secret_reference_id`,
        );
      }
      if (context.workspaceId && !referenceAllows(reference, context.workspaceId)) {
        throw IntegrationErrors.secretReferenceNotAllowed(
          mapping.secret_reference_id,
          `${param}.secret_reference_id`,
        );
      }
      normalised.push({
        target_field: target,
        secret_reference_id: reference.id,
        secret_key: mapping.secret_key ?? null,
        value_format: format,
      });
    }
    return normalised;
  }

  /** Integrations and providers whose mappings use the reference, as `kind 'slug'` names. */
  private async usersOf(manager: EntityManager, reference: SecretReferenceEntity): Promise<string[]> {
    const uses = (mappings: StoredSecretMapping[] | null) =>
      (mappings ?? []).some((mapping) => mapping.secret_reference_id === reference.id);
    const integrations = await manager.getRepository(IntegrationEntity).find({
      where: { organisation_id: reference.organisation_id },
      select: { id: true, slug: true, secret_mappings: true },
    });
    const providers = await manager.getRepository(ProviderEntity).find({
      where: { organisation_id: reference.organisation_id },
      select: { id: true, slug: true, kind: true, workspace_id: true, secret_mappings: true },
    });
    return [
      ...integrations.filter((row) => uses(row.secret_mappings)).map((row) => `integration '${row.slug}'`),
      ...providers
        .filter((row) => uses(row.secret_mappings))
        .map(
          (row) =>
            `${row.kind === 'virtual_key' ? 'virtual key' : 'provider'} '${row.slug}' (workspace ${row.workspace_id})`,
        ),
    ];
  }

  private async findByIdOrSlug(
    manager: EntityManager,
    organisationId: string,
    idOrSlug: string,
  ): Promise<SecretReferenceEntity | null> {
    const where = isUuid(idOrSlug)
      ? [
          { organisation_id: organisationId, id: idOrSlug },
          { organisation_id: organisationId, slug: idOrSlug },
        ]
      : [{ organisation_id: organisationId, slug: idOrSlug }];
    return manager.getRepository(SecretReferenceEntity).findOne({ where });
  }

  private async findVisible(
    manager: EntityManager,
    principal: Principal,
    idOrSlug: string,
  ): Promise<SecretReferenceEntity> {
    const reference = await this.findByIdOrSlug(manager, principal.organisationId, idOrSlug);
    if (!reference) throw IntegrationErrors.secretReferenceNotFound(idOrSlug);
    if (!principal.organisationWide && !referenceAllows(reference, principal.workspaceId ?? '')) {
      throw IntegrationErrors.secretReferenceNotFound(idOrSlug);
    }
    return reference;
  }

  private async workspaceIds(
    manager: EntityManager,
    principal: Principal,
    refs: string[],
  ): Promise<string[]> {
    const ids: string[] = [];
    for (const [index, ref] of refs.entries()) {
      try {
        ids.push((await this.workspaces.findVisible(principal, ref, manager)).id);
      } catch {
        throw IntegrationErrors.invalidField(
          `allowed_workspaces[${index}]`,
          `'${ref}' is not a workspace of this organisation`,
          'isWorkspace',
        );
      }
    }
    return [...new Set(ids)];
  }

  private async uniqueSlug(manager: EntityManager, organisationId: string, name: string): Promise<string> {
    const base = slugify(name);
    const repository = manager.getRepository(SecretReferenceEntity);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const candidate = attempt === 0 ? base : `${base}-${randomUUID().slice(0, 6)}`;
      if (!(await repository.exists({ where: { organisation_id: organisationId, slug: candidate } })))
        return candidate;
    }
    return `${base}-${randomUUID()}`;
  }

  private toListItem(row: SecretReferenceEntity) {
    return {
      object: 'secret-reference' as const,
      id: row.id,
      name: row.name,
      slug: row.slug,
      manager_type: row.manager_type,
      status: 'ACTIVE' as const,
      tags: row.tags,
      created_at: row.created_at.toISOString(),
      last_updated_at: row.updated_at.toISOString(),
    };
  }

  private toDetail(row: SecretReferenceEntity) {
    const authConfig = this.cipher.decryptJson<Record<string, unknown>>(row.auth_config_encrypted);
    return {
      ...this.toListItem(row),
      organisation_id: row.organisation_id,
      description: row.description,
      secret_path: row.secret_path,
      secret_key: row.secret_key,
      allow_all_workspaces: row.allow_all_workspaces,
      allowed_workspaces: row.allowed_workspaces,
      created_by: row.created_by_user_id ?? row.created_by_key_id,
      auth_config: maskSecretAuthConfig(authConfig),
    };
  }
}
