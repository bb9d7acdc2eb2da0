import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, FindOptionsWhere } from 'typeorm';
import { Principal, isUuid, listEnvelope, toPage } from '@switchboard/common';
import {
  CreateRateLimitPolicyDto,
  GetPolicyQueryDto,
  ListRateLimitPoliciesQueryDto,
  UpdateRateLimitPolicyDto,
} from './dto/policy.dto';
import { RateLimitPolicyEntity } from './entities/rate-limit-policy.entity';
import { PolicyErrors } from './policies.errors';
import { toRateLimitPolicyResponse } from './policies.mapper';
import { PolicyRegistry } from './policy-registry';
import { PolicyScopeService } from './policy-scope.service';

@Injectable()
export class RateLimitPoliciesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly scopes: PolicyScopeService,
    private readonly registry: PolicyRegistry,
  ) {}

  async create(principal: Principal, dto: CreateRateLimitPolicyDto) {
    const scope = await this.scopes.resolve(principal, dto);
    const conditions = await this.scopes.conditions(principal, scope, dto.conditions);
    const groupBy = this.scopes.groupBy(dto.group_by);
    const repository = this.dataSource.getRepository(RateLimitPolicyEntity);
    const policy = repository.create({
      id: randomUUID(),
      organisation_id: scope.organisationId,
      workspace_id: scope.workspaceId,
      name: dto.name ?? null,
      conditions,
      group_by: groupBy,
      type: dto.type,
      unit: dto.unit,
      value: dto.value,
      status: 'active',
      created_by_user_id: principal.user?.id ?? null,
      created_by_key_id: principal.apiKey?.id ?? null,
    });
    await repository.insert(policy);
    await this.registry.changed();
    return { id: policy.id, object: 'policy_usage_limits' as const };
  }

  async list(principal: Principal, query: ListRateLimitPoliciesQueryDto) {
    const { skip, take } = toPage(query);
    const where: FindOptionsWhere<RateLimitPolicyEntity> = await this.scopes.listFilter(principal, query);
    if (query.type) where.type = query.type;
    if (query.unit) where.unit = query.unit;
    const [rows, total] = await this.dataSource
      .getRepository(RateLimitPolicyEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    return listEnvelope(rows.map(toRateLimitPolicyResponse), total);
  }

  async get(principal: Principal, id: string, query: GetPolicyQueryDto) {
    const policy = await this.findVisible(principal, id, query.status ?? 'active');
    return { ...toRateLimitPolicyResponse(policy), object: 'policy_rate_limits' as const };
  }

  async update(principal: Principal, id: string, dto: UpdateRateLimitPolicyDto) {
    const policy = await this.findVisible(principal, id, 'active');
    const changes: Partial<RateLimitPolicyEntity> = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.unit !== undefined) changes.unit = dto.unit;
    if (dto.value !== undefined) changes.value = dto.value;
    if (Object.keys(changes).length > 0) {
      await this.dataSource.getRepository(RateLimitPolicyEntity).update({ id: policy.id }, changes);
      await this.registry.changed();
    }
    return {};
  }

  /** Archives: the policy stops applying at once and stays readable with `status=archived`. */
  async remove(principal: Principal, id: string) {
    const policy = await this.findVisible(principal, id, 'active');
    await this.dataSource
      .getRepository(RateLimitPolicyEntity)
      .update({ id: policy.id }, { status: 'archived' });
    await this.registry.changed();
    return {};
  }

  private async findVisible(principal: Principal, id: string, status: 'active' | 'archived') {
    if (!isUuid(id)) throw PolicyErrors.rateLimitNotFound(id);
    const policy = await this.dataSource
      .getRepository(RateLimitPolicyEntity)
      .findOne({ where: { organisation_id: principal.organisationId, id } });
    if (!policy || policy.status !== status) throw PolicyErrors.rateLimitNotFound(id);
    if (!this.scopes.visible(principal, policy)) throw PolicyErrors.rateLimitNotFound(id);
    return policy;
  }
}
