import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDateString,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { PageQueryDto } from '@switchboard/common';
import { isPolicyKey } from '../policy-matching';
import type { BudgetType, PeriodicReset, RateLimitType, RateLimitUnit } from '../policy.types';

@ValidatorConstraint({ name: 'isPolicyKey' })
class PolicyKeyConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return isPolicyKey(value);
  }
  defaultMessage(): string {
    return 'key must be api_key, organisation_id, workspace_id or metadata.<field> (letters, digits, _ . -)';
  }
}

const MAX_CONDITIONS = 20;
const FINITE = { allowNaN: false, allowInfinity: false };
/** Query strings carry text: `true`/`false` become booleans, anything else stays and fails. */
const toBoolean = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;

export class PolicyConditionDto {
  @IsString()
  @Validate(PolicyKeyConstraint)
  key: string;

  @IsString()
  @MinLength(1)
  @MaxLength(255)
  value: string;
}

export class PolicyGroupByDto {
  @IsString()
  @Validate(PolicyKeyConstraint)
  key: string;
}

class PolicyScopeDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string | null;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_CONDITIONS)
  @ValidateNested({ each: true })
  @Type(() => PolicyConditionDto)
  conditions: PolicyConditionDto[];

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_CONDITIONS)
  @ValidateNested({ each: true })
  @Type(() => PolicyGroupByDto)
  group_by: PolicyGroupByDto[];

  /** Workspace id or slug; needed only when not authenticating with an API key. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsUUID()
  organisation_id?: string;
}

export class CreateRateLimitPolicyDto extends PolicyScopeDto {
  @IsIn(['requests', 'tokens'])
  type: RateLimitType;

  @IsIn(['rpm', 'rph', 'rpd'])
  unit: RateLimitUnit;

  @IsNumber(FINITE)
  @IsPositive()
  @Max(1e15)
  value: number;
}

export class UpdateRateLimitPolicyDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string | null;

  @IsOptional()
  @IsIn(['rpm', 'rph', 'rpd'])
  unit?: RateLimitUnit;

  @IsOptional()
  @IsNumber(FINITE)
  @IsPositive()
  @Max(1e15)
  value?: number;
}

class UsageLimitFieldsDto {
  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  alert_threshold?: number | null;

  @IsOptional()
  @IsIn(['weekly', 'monthly'])
  periodic_reset?: PeriodicReset | null;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365)
  periodic_reset_days?: number | null;

  @IsOptional()
  @IsDateString({ strict: true })
  next_usage_reset_at?: string | null;
}

export class CreateUsageLimitPolicyDto extends PolicyScopeDto {
  @IsIn(['cost', 'tokens'])
  type: BudgetType;

  /** Dollars for `cost`, tokens for `tokens`. */
  @IsNumber(FINITE)
  @Min(0)
  @Max(1e7)
  credit_limit: number;

  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  alert_threshold?: number | null;

  @IsOptional()
  @IsIn(['weekly', 'monthly'])
  periodic_reset?: PeriodicReset | null;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365)
  periodic_reset_days?: number | null;

  @IsOptional()
  @IsDateString({ strict: true })
  next_usage_reset_at?: string | null;
}

export class UpdateUsageLimitPolicyDto extends UsageLimitFieldsDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string | null;

  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  @Max(1e7)
  credit_limit?: number;

  /** Resets the usage of the entity with this value key (e.g. `api_key:<id>`) to 0. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(600)
  reset_usage_for_value?: string;
}

export class ListRateLimitPoliciesQueryDto extends PageQueryDto {
  /** Workspace id or slug. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';

  @IsOptional()
  @IsIn(['requests', 'tokens'])
  type?: RateLimitType;

  @IsOptional()
  @IsIn(['rpm', 'rph', 'rpd'])
  unit?: RateLimitUnit;
}

export class ListUsageLimitPoliciesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';

  @IsOptional()
  @IsIn(['cost', 'tokens'])
  type?: BudgetType;
}

export class GetPolicyQueryDto {
  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';
}

export class GetUsageLimitPolicyQueryDto extends GetPolicyQueryDto {
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean()
  include_usage?: boolean;
}

export class ListPolicyEntitiesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(['active', 'exhausted'])
  status?: 'active' | 'exhausted';

  /** Part of the value key, e.g. an API key id. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  search?: string;
}
