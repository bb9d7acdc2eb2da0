import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { InvalidationBus } from '@switchboard/common';
import { RateLimitPolicyEntity } from './entities/rate-limit-policy.entity';
import { UsageLimitPolicyEntity } from './entities/usage-limit-policy.entity';
import { decimal } from './policies.mapper';
import { PolicyMatcher } from './policy-matching';
import { BudgetType, RateLimitType, RateLimitUnit, WINDOW_MS, toUnits } from './policy.types';
import { ResetRule, resetRuleOf } from './periods';
import { SLOTS_PER_WINDOW } from './counters/counter-store';

/** Policy definitions changed: every replica reloads them. */
export const POLICIES_TOPIC = 'policies';
/** Budget counters were reset or their alerts re-armed: every replica drops its counter cache. */
export const COUNTERS_TOPIC = 'policies.counters';

export interface CompiledRatePolicy {
  id: string;
  name: string | null;
  type: RateLimitType;
  unit: RateLimitUnit;
  limit: number;
  slotMs: number;
  /** Counter key prefix; the unit is part of it, so changing the unit starts a fresh window. */
  keyPrefix: string;
  matcher: PolicyMatcher;
}

export interface CompiledBudgetPolicy {
  id: string;
  name: string | null;
  organisationId: string;
  workspaceId: string | null;
  type: BudgetType;
  creditLimit: number;
  limitUnits: number;
  alertThreshold: number | null;
  thresholdUnits: number | null;
  resetRule: ResetRule;
  nextResetAt: Date | null;
  matcher: PolicyMatcher;
}

export interface PolicyBucket {
  rates: CompiledRatePolicy[];
  budgets: CompiledBudgetPolicy[];
}

interface OrganisationPolicies {
  /** Policies of one workspace. */
  workspaces: Map<string, PolicyBucket>;
  /** Policies made without a workspace: they apply in every workspace. */
  organisation: PolicyBucket;
}

const EMPTY: PolicyBucket = { rates: [], budgets: [] };

export function compileRatePolicy(policy: RateLimitPolicyEntity): CompiledRatePolicy {
  return {
    id: policy.id,
    name: policy.name,
    type: policy.type,
    unit: policy.unit,
    limit: decimal(policy.value),
    slotMs: WINDOW_MS[policy.unit] / SLOTS_PER_WINDOW,
    keyPrefix: `r|${policy.id}|${policy.unit}|`,
    matcher: new PolicyMatcher(
      policy.organisation_id,
      policy.workspace_id,
      policy.conditions,
      policy.group_by,
    ),
  };
}

export function compileBudgetPolicy(policy: UsageLimitPolicyEntity): CompiledBudgetPolicy {
  const creditLimit = decimal(policy.credit_limit);
  const alertThreshold = decimal(policy.alert_threshold);
  return {
    id: policy.id,
    name: policy.name,
    organisationId: policy.organisation_id,
    workspaceId: policy.workspace_id,
    type: policy.type,
    creditLimit,
    limitUnits: toUnits(policy.type, creditLimit),
    alertThreshold,
    thresholdUnits: alertThreshold === null ? null : toUnits(policy.type, alertThreshold),
    resetRule: resetRuleOf(policy.periodic_reset, policy.periodic_reset_days),
    nextResetAt: policy.next_usage_reset_at,
    matcher: new PolicyMatcher(
      policy.organisation_id,
      policy.workspace_id,
      policy.conditions,
      policy.group_by,
    ),
  };
}

/**
 * Every active policy, in memory, indexed by organisation and workspace: the request path reads
 * only this. It is loaded at start and reloaded whenever a policy changes on any replica.
 */
@Injectable()
export class PolicyRegistry implements OnModuleInit {
  private readonly logger = new Logger(PolicyRegistry.name);
  private index = new Map<string, OrganisationPolicies>();
  private budgetsById = new Map<string, CompiledBudgetPolicy>();
  private loading: Promise<void> | null = null;
  private again = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: InvalidationBus,
  ) {}

  async onModuleInit(): Promise<void> {
    this.bus.on(POLICIES_TOPIC, () => void this.reload());
    await this.reload();
  }

  /** After a write: this replica sees the change before answering; the others within a message's time. */
  async changed(): Promise<void> {
    this.bus.publish(POLICIES_TOPIC);
    await this.reload();
  }

  /** The policies of a workspace, and those of its whole organisation. */
  workspaceBucket(organisationId: string, workspaceId: string | null): PolicyBucket {
    if (workspaceId === null) return EMPTY;
    return this.index.get(organisationId)?.workspaces.get(workspaceId) ?? EMPTY;
  }

  organisationBucket(organisationId: string): PolicyBucket {
    return this.index.get(organisationId)?.organisation ?? EMPTY;
  }

  /**
   * Whether any active policy covers the workspace, its own or its organisation's. The index
   * holds only organisations that have policies, so the common answer is one Map miss.
   */
  hasPolicies(organisationId: string, workspaceId: string | null): boolean {
    const organisation = this.index.get(organisationId);
    if (!organisation) return false;
    if (organisation.organisation.rates.length > 0 || organisation.organisation.budgets.length > 0)
      return true;
    const workspace = workspaceId === null ? undefined : organisation.workspaces.get(workspaceId);
    return workspace !== undefined && (workspace.rates.length > 0 || workspace.budgets.length > 0);
  }

  budget(id: string): CompiledBudgetPolicy | undefined {
    return this.budgetsById.get(id);
  }

  /**
   * Reloads from the database. Calls during a load wait for one more load after it, so a change
   * committed before the call is always seen when the promise resolves.
   */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading.then(() => (this.loading ? this.loading : this.reload()));
    }
    this.loading = this.load()
      .catch((error: Error) => this.logger.error(`Could not load policies: ${error.message}`))
      .finally(() => {
        this.loading = null;
        if (this.again) {
          this.again = false;
          void this.reload();
        }
      });
    return this.loading;
  }

  private async load(): Promise<void> {
    const [rates, budgets] = await Promise.all([
      this.dataSource.getRepository(RateLimitPolicyEntity).find({ where: { status: 'active' } }),
      this.dataSource.getRepository(UsageLimitPolicyEntity).find({ where: { status: 'active' } }),
    ]);
    const index = new Map<string, OrganisationPolicies>();
    const bucketOf = (organisationId: string, workspaceId: string | null): PolicyBucket => {
      let organisation = index.get(organisationId);
      if (!organisation) {
        organisation = { workspaces: new Map(), organisation: { rates: [], budgets: [] } };
        index.set(organisationId, organisation);
      }
      if (workspaceId === null) return organisation.organisation;
      let bucket = organisation.workspaces.get(workspaceId);
      if (!bucket) {
        bucket = { rates: [], budgets: [] };
        organisation.workspaces.set(workspaceId, bucket);
      }
      return bucket;
    };
    const budgetsById = new Map<string, CompiledBudgetPolicy>();
    for (const policy of rates)
      bucketOf(policy.organisation_id, policy.workspace_id).rates.push(compileRatePolicy(policy));
    for (const policy of budgets) {
      const compiled = compileBudgetPolicy(policy);
      bucketOf(policy.organisation_id, policy.workspace_id).budgets.push(compiled);
      budgetsById.set(policy.id, compiled);
    }
    this.index = index;
    this.budgetsById = budgetsById;
  }
}
