import { Injectable } from '@nestjs/common';
import { ApiKeysService } from '@switchboard/api-keys';
import { AppError, Principal, isUuid } from '@switchboard/common';
import { WorkspacesService } from '@switchboard/identity';
import { PolicyConditionDto, PolicyGroupByDto } from './dto/policy.dto';
import { PolicyErrors } from './policies.errors';
import type { PolicyCondition, PolicyGroupBy } from './policy.types';

export interface PolicyScope {
  organisationId: string;
  /** Null: an organisation-wide policy, applying in every workspace. */
  workspaceId: string | null;
}

/**
 * Where a new policy lives and what its conditions name, checked against what the caller may
 * see: workspace principals make policies for their own workspace only, and a condition must
 * name something that exists there (a condition that can never match is a mistake to report).
 */
@Injectable()
export class PolicyScopeService {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async resolve(
    principal: Principal,
    body: { workspace_id?: string; organisation_id?: string },
  ): Promise<PolicyScope> {
    // The spec: with an API key both are implied; otherwise (a JWT) both are required.
    if (!principal.apiKey) {
      if (!body.organisation_id) throw PolicyErrors.fieldRequired('organisation_id');
      if (!body.workspace_id) throw PolicyErrors.fieldRequired('workspace_id');
    }
    if (body.organisation_id && body.organisation_id !== principal.organisationId)
      throw PolicyErrors.otherOrganisation();
    if (body.workspace_id) {
      const workspace = await this.workspaces.findVisible(principal, body.workspace_id);
      return { organisationId: principal.organisationId, workspaceId: workspace.id };
    }
    if (!principal.organisationWide) {
      if (!principal.workspaceId) throw PolicyErrors.fieldRequired('workspace_id');
      return { organisationId: principal.organisationId, workspaceId: principal.workspaceId };
    }
    return { organisationId: principal.organisationId, workspaceId: null };
  }

  /**
   * The filter of a policy list: the caller's organisation, a status (active unless asked), and
   * a workspace (the one asked for, if visible; a workspace principal's own otherwise).
   */
  async listFilter(
    principal: Principal,
    query: { workspace_id?: string; status?: 'active' | 'archived' },
  ): Promise<{ organisation_id: string; status: 'active' | 'archived'; workspace_id?: string }> {
    const filter: { organisation_id: string; status: 'active' | 'archived'; workspace_id?: string } = {
      organisation_id: principal.organisationId,
      status: query.status ?? 'active',
    };
    if (query.workspace_id)
      filter.workspace_id = (await this.workspaces.findVisible(principal, query.workspace_id)).id;
    else if (!principal.organisationWide) filter.workspace_id = principal.workspaceId ?? '';
    return filter;
  }

  /** Whether a policy row is the caller's to see: organisation-wide callers see all of theirs. */
  visible(principal: Principal, policy: { workspace_id: string | null }): boolean {
    return principal.organisationWide || policy.workspace_id === principal.workspaceId;
  }

  /** Validated conditions, workspace slugs replaced by ids. */
  async conditions(
    principal: Principal,
    scope: PolicyScope,
    conditions: PolicyConditionDto[],
  ): Promise<PolicyCondition[]> {
    const seen = new Set<string>();
    const result: PolicyCondition[] = [];
    for (const [index, condition] of conditions.entries()) {
      if (seen.has(condition.key)) throw PolicyErrors.duplicateKey('conditions', index, condition.key);
      seen.add(condition.key);
      result.push({
        key: condition.key,
        value: await this.conditionValue(principal, scope, index, condition),
      });
    }
    return result;
  }

  groupBy(groupBy: PolicyGroupByDto[]): PolicyGroupBy[] {
    const seen = new Set<string>();
    return groupBy.map((group, index) => {
      if (seen.has(group.key)) throw PolicyErrors.duplicateKey('group_by', index, group.key);
      seen.add(group.key);
      return { key: group.key };
    });
  }

  private async conditionValue(
    principal: Principal,
    scope: PolicyScope,
    index: number,
    condition: PolicyConditionDto,
  ): Promise<string> {
    if (condition.key === 'organisation_id') {
      if (condition.value !== scope.organisationId)
        throw PolicyErrors.badCondition(
          index,
          'must be the id of your organisation (rule: sameOrganisation)',
        );
      return condition.value;
    }
    if (condition.key === 'workspace_id') {
      const workspace = await this.workspaces
        .findVisible(principal, condition.value)
        .catch((error: unknown) => {
          if (error instanceof AppError && error.status === 404)
            throw PolicyErrors.badCondition(
              index,
              `'${condition.value}' names no workspace you can see (rule: workspaceExists)`,
            );
          throw error;
        });
      if (scope.workspaceId !== null && workspace.id !== scope.workspaceId)
        throw PolicyErrors.badCondition(
          index,
          `must name the policy's own workspace, ${scope.workspaceId} (rule: sameWorkspace)`,
        );
      return workspace.id;
    }
    if (condition.key === 'api_key') {
      const owner = isUuid(condition.value)
        ? (await this.apiKeys.ownersOf([condition.value])).get(condition.value)
        : undefined;
      const visible =
        owner &&
        owner.organisationId === scope.organisationId &&
        (scope.workspaceId === null || owner.workspaceId === scope.workspaceId) &&
        (principal.organisationWide || owner.workspaceId === principal.workspaceId);
      if (!visible)
        throw PolicyErrors.badCondition(
          index,
          `'${condition.value}' is not the id of an API key in the policy's scope (rule: apiKeyExists)`,
        );
      return condition.value;
    }
    return condition.value;
  }
}
