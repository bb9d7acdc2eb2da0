import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto, UsageLimitsDto } from '@switchboard/common';
import { IsTags } from '../tags';
import { RateLimits, SecretMappingDto, SecretMappings, Slug } from './common.dto';
import { PricingAdjustmentsDto, PricingConfigDto } from './pricing.dto';

export class CreateIntegrationDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  @IsOptional()
  @Slug()
  slug?: string;

  /** Provider name (`openai`, `azure-openai`, `bedrock`, `vertex-ai`, ...). */
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  ai_provider_id: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  key?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  /** Makes a workspace-scoped integration (id or slug). */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsObject()
  configurations?: Record<string, unknown>;

  @IsOptional()
  @IsBoolean()
  create_default_provider?: boolean;

  @IsOptional()
  @Slug()
  default_provider_slug?: string;

  @SecretMappings()
  secret_mappings?: SecretMappingDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => PricingAdjustmentsDto)
  pricing_adjustments?: PricingAdjustmentsDto | null;

  @IsOptional()
  @IsTags()
  tags?: Record<string, string> | null;
}

export class UpdateIntegrationDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  key?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  /** Merged into the stored configuration; a null value removes a field. */
  @IsOptional()
  @IsObject()
  configurations?: Record<string, unknown>;

  /** Replaces the stored mappings. */
  @SecretMappings()
  secret_mappings?: SecretMappingDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => PricingAdjustmentsDto)
  pricing_adjustments?: PricingAdjustmentsDto | null;

  @IsOptional()
  @IsTags()
  tags?: Record<string, string> | null;
}

export class ListIntegrationsQueryDto extends PageQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsIn(['workspace', 'organisation', 'all'])
  type?: 'workspace' | 'organisation' | 'all';

  @IsOptional()
  @IsString()
  @MaxLength(64)
  ai_provider_id?: string;

  /** JSON object: every pair must match (`{"env":"prod"}`). */
  @IsOptional()
  @IsString()
  @MaxLength(8192)
  tags?: string;
}

class WorkspaceLimitsDto {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1)
  @ValidateNested({ each: true })
  @Type(() => UsageLimitsDto)
  usage_limits?: UsageLimitsDto[] | null;

  @RateLimits(1)
  rate_limits?: Record<string, unknown>[] | null;
}

export class WorkspaceAccessDto extends WorkspaceLimitsDto {
  /** Workspace id or slug. */
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  id: string;

  @IsBoolean()
  enabled: boolean;

  /** Turns the workspace's exhausted default providers of this integration active again. */
  @IsOptional()
  @IsBoolean()
  reset_usage?: boolean;

  @IsOptional()
  @IsBoolean()
  create_default_provider?: boolean;

  @IsOptional()
  @Slug()
  default_provider_slug?: string;
}

export class GlobalWorkspaceAccessDto extends WorkspaceLimitsDto {
  @IsBoolean()
  enabled: boolean;
}

export class BulkUpdateWorkspacesDto {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => WorkspaceAccessDto)
  workspaces?: WorkspaceAccessDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => GlobalWorkspaceAccessDto)
  global_workspace_access?: GlobalWorkspaceAccessDto;

  /** Workspaces not listed lose their access (with `workspaces: []`, every workspace does). */
  @IsOptional()
  @IsBoolean()
  override_existing_workspace_access?: boolean;

  @IsOptional()
  @IsBoolean()
  create_default_provider?: boolean;

  @IsOptional()
  @Slug()
  default_provider_slug?: string;
}

class ModelConfigurationsDto {
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  custom_host?: string;
}

export class ModelUpdateDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  slug: string;

  @IsBoolean()
  enabled: boolean;

  @IsOptional()
  @IsBoolean()
  is_custom?: boolean | null;

  @IsOptional()
  @IsBoolean()
  is_finetune?: boolean | null;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  base_model_slug?: string | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => ModelConfigurationsDto)
  configurations?: ModelConfigurationsDto | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => PricingConfigDto)
  pricing_config?: PricingConfigDto | null;
}

export class BulkUpdateModelsDto {
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => ModelUpdateDto)
  models: ModelUpdateDto[];

  @IsOptional()
  @IsBoolean()
  allow_all_models?: boolean;
}

export class DeleteModelsQueryDto {
  /** Comma-separated model slugs. */
  @IsString()
  @MinLength(1)
  @MaxLength(65536)
  slugs: string;
}
