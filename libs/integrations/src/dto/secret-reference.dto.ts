import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { PageQueryDto } from '@switchboard/common';
import { IsTags } from '../tags';
import { Slug } from './common.dto';

export const MANAGER_TYPES = ['hashicorp_vault', 'aws_sm', 'azure_kv'] as const;

export class CreateSecretReferenceDto {
  @IsOptional()
  @IsUUID()
  organisation_id?: string;

  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  @IsOptional()
  @Slug()
  slug?: string;

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string | null;

  @IsIn(MANAGER_TYPES)
  manager_type: (typeof MANAGER_TYPES)[number];

  @IsObject()
  auth_config: Record<string, unknown>;

  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  secret_path: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  secret_key?: string | null;

  @IsOptional()
  @IsBoolean()
  allow_all_workspaces?: boolean;

  /** Workspace ids or slugs; excludes allow_all_workspaces=true. */
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  allowed_workspaces?: string[];

  @IsOptional()
  @IsTags()
  tags?: Record<string, string> | null;
}

export class UpdateSecretReferenceDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string | null;

  /** Merged into the stored configuration, validated against the stored manager_type. */
  @IsOptional()
  @IsObject()
  auth_config?: Record<string, unknown>;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  secret_path?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  secret_key?: string | null;

  @IsOptional()
  @IsBoolean()
  allow_all_workspaces?: boolean;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  allowed_workspaces?: string[];

  @IsOptional()
  @IsTags()
  tags?: Record<string, string> | null;
}

export class ListSecretReferencesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(MANAGER_TYPES)
  manager_type?: (typeof MANAGER_TYPES)[number];

  @IsOptional()
  @IsString()
  @MaxLength(8192)
  tags?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  search?: string;
}

export class PricingQueryDto {
  /** Apply this integration's pricing adjustments and custom model pricing (slug or id). */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  integration?: string;

  /** Or: a workspace provider's (`@slug` without the `@`), which applies its integration's pricing. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  provider_slug?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;
}
