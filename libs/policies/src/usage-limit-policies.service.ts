import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, FindOptionsWhere } from 'typeorm';
import { InvalidationBus, Principal, isUuid, listEnvelope, toPage } from '@switchboard/common';
import { CounterLedger } from './counter-ledger';
import {
  CreateUsageLimitPolicyDto,
  GetUsageLimitPolicyQueryDto,
  ListPolicyEntitiesQueryDto,
  ListUsageLimitPoliciesQueryDto,
  UpdateUsageLimitPolicyDto,
} from './dto/policy.dto';
import { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import { UsageLimitPolicyEntity } from './entities/usage-limit-policy.entity';
import { PolicyErrors } from './policies.errors';
import { decimal, toPolicyEntityResponse, toUsageLimitPolicyResponse } from './policies.mapper';
import { COUNTERS_TOPIC, PolicyRegistry } from './policy-registry';
import { PolicyScopeService } from './policy-scope.service';
import { PeriodicReset, fromUnits } from './policy.types';
import { firstBoundary, resetRuleOf } from './periods';
import { UsageRecorder } from './usage-recorder';

/** Entities shown by `include_usage=true` on one policy; the entities route pages through all. */
const MAX_USAGE_MAP = 1000;

@Injectable()
export class UsageLimitPoliciesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly scopes: PolicyScopeService,
    private readonly registry: PolicyRegistry,
    private readonly ledger: CounterLedger,
    private readonly recorder: UsageRecorder,
    private readonly bus: InvalidationBus,
  ) {}

  async create(principal: Principal, dto: CreateUsageLimitPolicyDto) {
    const scope = await this.scopes.resolve(principal, dto);
    const conditions = await this.scopes.conditions(principal, scope, dto.conditions);
    const groupBy = this.scopes.groupBy(dto.group_by);
    const threshold = dto.alert_threshold ?? null;
    if (threshold !== null && threshold >= dto.credit_limit) throw PolicyErrors.thresholdNotBelowLimit();
    const schedule = this.schedule(
      dto.periodic_reset ?? null,
      dto.periodic_reset_days ?? null,
      dto.next_usage_reset_at ?? null,
    );
    const repository = this.dataSource.getRepository(UsageLimitPolicyEntity);
    const policy = repository.create({
      id: randomUUID(),
      organisation_id: scope.organisationId,
      workspace_id: scope.workspaceId,
      name: dto.name ?? null,
      conditions,
      group_by: groupBy,
      type: dto.type,
      credit_limit: dto.credit_limit,
      alert_threshold: threshold,
      periodic_reset: schedule.periodicReset,
      periodic_reset_days: schedule.periodicResetDays,
      next_usage_reset_at: schedule.nextResetAt,
      last_reset_at: null,
      status: 'active',
      created_by_user_id: principal.user?.id ?? null,
      created_by_key_id: principal.apiKey?.id ?? null,
    });
    await repository.insert(policy);
    await this.registry.changed();
    return { id: policy.id, object: 'policy_usage_limits' as const };
  }

  async list(principal: Principal, query: ListUsageLimitPoliciesQueryDto) {
    const { skip, take } = toPage(query);
    const where: FindOptionsWhere<UsageLimitPolicyEntity> = await this.scopes.listFilter(principal, query);
    if (query.type) where.type = query.type;
    const [rows, total] = await this.dataSource
      .getRepository(UsageLimitPolicyEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    return listEnvelope(rows.map(toUsageLimitPolicyResponse), total);
  }

  async get(principal: Principal, id: string, query: GetUsageLimitPolicyQueryDto) {
    const policy = await this.findVisible(principal, id, query.status ?? 'active');
    const response = { ...toUsageLimitPolicyResponse(policy), object: 'policy_usage_limits' as const };
    if (!query.include_usage) return response;
    await this.recorder.flush();
    const counters = await this.dataSource.getRepository(UsageLimitCounterEntity).find({
      where: { policy_key: policy.id },
      order: { created_at: 'ASC', id: 'ASC' },
      take: MAX_USAGE_MAP,
    });
    const usage = await this.liveUsage(counters);
    const limit = decimal(policy.credit_limit);
    const map: Record<string, object> = {};
    counters.forEach((counter, index) => {
      map[counter.value_key] = {
        current_usage: usage[index],
        status: usage[index] >= limit ? 'exhausted' : 'active',
        is_threshold_alerts_sent: counter.threshold_alert_sent,
        is_exhausted_alerts_sent: counter.exhausted_alert_sent,
      };
    });
    return { ...response, value_key_usage_map: map };
  }

  /**
   * Raising the credit limit reactivates exhausted entities at once and re-arms both alerts;
   * raising or clearing the alert threshold re-arms the threshold alert. All in one transaction.
   */
  async update(principal: Principal, id: string, dto: UpdateUsageLimitPolicyDto) {
    const now = new Date();
    const resetKeys = await this.dataSource.transaction(async (manager) => {
      const policy = await this.findVisible(principal, id, 'active', manager);
      const oldLimit = decimal(policy.credit_limit);
      const oldThreshold = decimal(policy.alert_threshold);
      const limit = dto.credit_limit ?? oldLimit;
      const threshold = dto.alert_threshold !== undefined ? dto.alert_threshold : oldThreshold;
      if (threshold !== null && threshold >= limit) throw PolicyErrors.thresholdNotBelowLimit();

      const changes: Partial<UsageLimitPolicyEntity> = {};
      if (dto.name !== undefined) changes.name = dto.name;
      if (dto.credit_limit !== undefined) changes.credit_limit = dto.credit_limit;
      if (dto.alert_threshold !== undefined) changes.alert_threshold = dto.alert_threshold;

      const scheduleTouched =
        dto.periodic_reset !== undefined ||
        dto.periodic_reset_days !== undefined ||
        dto.next_usage_reset_at !== undefined;
      if (scheduleTouched) {
        if (dto.periodic_reset != null && dto.periodic_reset_days != null) throw PolicyErrors.bothResets();
        // Setting one kind of period replaces the other.
        const periodicResetDays =
          dto.periodic_reset_days !== undefined
            ? dto.periodic_reset_days
            : dto.periodic_reset != null
              ? null
              : policy.periodic_reset_days;
        const periodicReset =
          dto.periodic_reset !== undefined
            ? dto.periodic_reset
            : dto.periodic_reset_days != null
              ? null
              : policy.periodic_reset;
        const schedule = this.schedule(
          periodicReset,
          periodicResetDays,
          dto.next_usage_reset_at ?? null,
          now,
        );
        changes.periodic_reset = schedule.periodicReset;
        changes.periodic_reset_days = schedule.periodicResetDays;
        changes.next_usage_reset_at = schedule.nextResetAt;
        await manager.getRepository(UsageLimitCounterEntity).update(
          { policy_key: policy.id },
          {
            reset_rule: resetRuleOf(schedule.periodicReset, schedule.periodicResetDays),
            next_reset_at: schedule.nextResetAt,
          },
        );
      }
      if (Object.keys(changes).length > 0)
        await manager.getRepository(UsageLimitPolicyEntity).update({ id: policy.id }, changes);

      const counters = manager
        .createQueryBuilder()
        .update(UsageLimitCounterEntity)
        .where('policy_key = :policyKey', { policyKey: policy.id });
      if (limit > oldLimit) {
        await counters
          .clone()
          .set({
            threshold_alert_sent: false,
            exhausted_alert_sent: false,
            status: () => "CASE WHEN current_usage >= :limit THEN 'exhausted' ELSE 'active' END",
          })
          .setParameter('limit', limit)
          .execute();
      } else if (limit < oldLimit) {
        await counters
          .clone()
          .set({ status: () => "CASE WHEN current_usage >= :limit THEN 'exhausted' ELSE 'active' END" })
          .setParameter('limit', limit)
          .execute();
      }
      if (oldThreshold !== null && (threshold === null || threshold > oldThreshold))
        await counters.clone().set({ threshold_alert_sent: false }).execute();

      if (dto.reset_usage_for_value === undefined) return [];
      const row = await manager
        .getRepository(UsageLimitCounterEntity)
        .findOne({ where: { policy_key: policy.id, value_key: dto.reset_usage_for_value } });
      // Nothing tracked for that value yet: its usage is already 0.
      return row ? this.ledger.resetRows(manager, [row], now, 'manual') : [];
    });
    await this.ledger.announceReset(resetKeys);
    this.bus.publish(COUNTERS_TOPIC);
    await this.registry.changed();
    return {};
  }

  /** Archives: the budget stops applying at once; its entities keep their usage. */
  async remove(principal: Principal, id: string) {
    const policy = await this.findVisible(principal, id, 'active');
    await this.dataSource
      .getRepository(UsageLimitPolicyEntity)
      .update({ id: policy.id }, { status: 'archived' });
    await this.registry.changed();
    return {};
  }

  async entities(principal: Principal, id: string, query: ListPolicyEntitiesQueryDto) {
    const policy = await this.findVisible(principal, id, null);
    await this.recorder.flush();
    const { skip, take } = toPage(query);
    const builder = this.dataSource
      .getRepository(UsageLimitCounterEntity)
      .createQueryBuilder('c')
      .where('c.policy_key = :policyKey', { policyKey: policy.id });
    // Exhausted means usage at the limit as it is now: a raised limit reactivates at once.
    if (query.status === 'exhausted')
      builder.andWhere('c.current_usage >= :limit', { limit: policy.credit_limit });
    if (query.status === 'active')
      builder.andWhere('c.current_usage < :limit', { limit: policy.credit_limit });
    if (query.search) {
      const pattern = `%${query.search.replace(/[\\%_]/g, (match) => `\\${match}`)}%`;
      builder.andWhere("c.value_key LIKE :pattern ESCAPE '\\'", { pattern });
    }
    const [rows, total] = await builder
      .orderBy('c.created_at', 'ASC')
      .addOrderBy('c.id', 'ASC')
      .skip(skip)
      .take(take)
      .getManyAndCount();
    const usage = await this.liveUsage(rows);
    const limit = decimal(policy.credit_limit);
    return listEnvelope(
      rows.map((row, index) => toPolicyEntityResponse(row, usage[index], limit)),
      total,
    );
  }

  /** Usage back to 0 for one entity (by id or value key), alerts re-armed, now. */
  async resetEntity(principal: Principal, id: string, entityId: string) {
    const policy = await this.findVisible(principal, id, null);
    const repository = this.dataSource.getRepository(UsageLimitCounterEntity);
    const row = await repository.findOne({
      where: isUuid(entityId)
        ? [
            { policy_key: policy.id, id: entityId },
            { policy_key: policy.id, value_key: entityId },
          ]
        : [{ policy_key: policy.id, value_key: entityId }],
    });
    if (!row) throw PolicyErrors.entityNotFound(entityId);
    await this.ledger.announceReset(
      await this.ledger.resetRows(this.dataSource.manager, [row], new Date(), 'manual'),
    );
    return {};
  }

  private schedule(
    periodicReset: PeriodicReset | null,
    periodicResetDays: number | null,
    nextUsageResetAt: string | null,
    now = new Date(),
  ) {
    if (periodicReset !== null && periodicResetDays !== null) throw PolicyErrors.bothResets();
    const rule = resetRuleOf(periodicReset, periodicResetDays);
    if (nextUsageResetAt !== null) {
      if (rule === null) throw PolicyErrors.resetAtWithoutPeriod();
      const at = new Date(nextUsageResetAt);
      if (at.getTime() <= now.getTime()) throw PolicyErrors.resetAtInPast();
      return { periodicReset, periodicResetDays, nextResetAt: at };
    }
    return { periodicReset, periodicResetDays, nextResetAt: firstBoundary(rule, now) };
  }

  /** Live usage from the counters where they exist (other replicas' settlements included). */
  private async liveUsage(rows: UsageLimitCounterEntity[]): Promise<number[]> {
    const live = await this.ledger.liveUnits(rows);
    return rows.map((row, index) => {
      const units = live[index];
      return units === null ? decimal(row.current_usage) : fromUnits(row.type, units);
    });
  }

  private async findVisible(
    principal: Principal,
    id: string,
    status: 'active' | 'archived' | null,
    manager: EntityManager = this.dataSource.manager,
  ) {
    if (!isUuid(id)) throw PolicyErrors.usageLimitNotFound(id);
    const policy = await manager
      .getRepository(UsageLimitPolicyEntity)
      .findOne({ where: { organisation_id: principal.organisationId, id } });
    if (!policy || (status !== null && policy.status !== status)) throw PolicyErrors.usageLimitNotFound(id);
    if (!this.scopes.visible(principal, policy)) throw PolicyErrors.usageLimitNotFound(id);
    return policy;
  }
}
