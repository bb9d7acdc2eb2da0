import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import type { Principal } from '@switchboard/common';
import {
  CreateRateLimitPolicyDto,
  CreateUsageLimitPolicyDto,
  GetPolicyQueryDto,
  GetUsageLimitPolicyQueryDto,
  ListPolicyEntitiesQueryDto,
  ListRateLimitPoliciesQueryDto,
  ListUsageLimitPoliciesQueryDto,
  UpdateRateLimitPolicyDto,
  UpdateUsageLimitPolicyDto,
} from './dto/policy.dto';
import { RateLimitPoliciesService } from './rate-limit-policies.service';
import { UsageLimitPoliciesService } from './usage-limit-policies.service';

@ApiTags('Rate limits policies')
@Controller('policies/rate-limits')
export class RateLimitPoliciesController {
  constructor(private readonly policies: RateLimitPoliciesService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'policies.create', audit: { resource: 'rate_limits_policy' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateRateLimitPolicyDto) {
    return this.policies.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'policies.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListRateLimitPoliciesQueryDto) {
    return this.policies.list(principal, query);
  }

  @Get(':rateLimitsPolicyId')
  @Authenticated({ permission: 'policies.read' })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('rateLimitsPolicyId') id: string,
    @Query() query: GetPolicyQueryDto,
  ) {
    return this.policies.get(principal, id, query);
  }

  @Put(':rateLimitsPolicyId')
  @Authenticated({
    permission: 'policies.update',
    audit: { resource: 'rate_limits_policy', idParam: 'rateLimitsPolicyId' },
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('rateLimitsPolicyId') id: string,
    @Body() dto: UpdateRateLimitPolicyDto,
  ) {
    return this.policies.update(principal, id, dto);
  }

  @Delete(':rateLimitsPolicyId')
  @Authenticated({
    permission: 'policies.delete',
    audit: { resource: 'rate_limits_policy', idParam: 'rateLimitsPolicyId' },
  })
  remove(@CurrentPrincipal() principal: Principal, @Param('rateLimitsPolicyId') id: string) {
    return this.policies.remove(principal, id);
  }
}

@ApiTags('Usage limits policies')
@Controller('policies/usage-limits')
export class UsageLimitPoliciesController {
  constructor(private readonly policies: UsageLimitPoliciesService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'policies.create', audit: { resource: 'usage_limits_policy' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateUsageLimitPolicyDto) {
    return this.policies.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'policies.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListUsageLimitPoliciesQueryDto) {
    return this.policies.list(principal, query);
  }

  @Get(':policyUsageLimitsId')
  @Authenticated({ permission: 'policies.read' })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('policyUsageLimitsId') id: string,
    @Query() query: GetUsageLimitPolicyQueryDto,
  ) {
    return this.policies.get(principal, id, query);
  }

  @Put(':policyUsageLimitsId')
  @Authenticated({
    permission: 'policies.update',
    audit: { resource: 'usage_limits_policy', idParam: 'policyUsageLimitsId' },
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('policyUsageLimitsId') id: string,
    @Body() dto: UpdateUsageLimitPolicyDto,
  ) {
    return this.policies.update(principal, id, dto);
  }

  @Delete(':policyUsageLimitsId')
  @Authenticated({
    permission: 'policies.delete',
    audit: { resource: 'usage_limits_policy', idParam: 'policyUsageLimitsId' },
  })
  remove(@CurrentPrincipal() principal: Principal, @Param('policyUsageLimitsId') id: string) {
    return this.policies.remove(principal, id);
  }

  /** The API keys, workspaces, users (and other groups) the budget tracks, with their usage. */
  @Get(':policyUsageLimitsId/entities')
  @Authenticated({ permission: 'policies.read' })
  entities(
    @CurrentPrincipal() principal: Principal,
    @Param('policyUsageLimitsId') id: string,
    @Query() query: ListPolicyEntitiesQueryDto,
  ) {
    return this.policies.entities(principal, id, query);
  }

  @Put(':policyUsageLimitsId/entities/:entityId/reset')
  @Authenticated({
    permission: 'policies.update',
    audit: { resource: 'usage_limits_policy', idParam: 'policyUsageLimitsId' },
  })
  resetEntity(
    @CurrentPrincipal() principal: Principal,
    @Param('policyUsageLimitsId') id: string,
    @Param('entityId') entityId: string,
  ) {
    return this.policies.resetEntity(principal, id, entityId);
  }
}
