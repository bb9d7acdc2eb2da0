import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDateString,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto, UsageLimitsDto } from '@switchboard/common';
import { IsTags } from '../tags';
import { RateLimits, SecretMappingDto, SecretMappings, Slug } from './common.dto';

class ProviderFieldsDto {
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  note?: string | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => UsageLimitsDto)
  usage_limits?: UsageLimitsDto | null;

  @RateLimits(3)
  rate_limits?: Record<string, unknown>[] | null;

  @IsOptional()
  @IsDateString({ strict: true })
  expires_at?: string | null;

  @IsOptional()
  @IsTags()
  tags?: Record<string, string> | null;
}

export class CreateProviderDto extends ProviderFieldsDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  /** Slug (or id) of the integration whose credentials the provider uses. */
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  integration_id: string;

  /** Needed with organisation-wide keys; workspace keys act in their own workspace. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @Slug()
  slug?: string;
}

export class UpdateProviderDto extends ProviderFieldsDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  /** Turns an exhausted provider active again. */
  @IsOptional()
  @IsBoolean()
  reset_usage?: boolean;

  @IsOptional()
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';
}

export class WorkspaceQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;
}

export class ListProvidersQueryDto extends PageQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(8192)
  tags?: string;

  /** Only providers of this integration (slug or id). */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  integration_id?: string;
}

/** Virtual-key settings in the reference's camelCase spelling; checked per provider by the service. */
class VirtualKeySettingsDto {
  @IsOptional() apiVersion?: unknown;
  @IsOptional() deploymentName?: unknown;
  @IsOptional() deploymentConfig?: unknown;
  @IsOptional() resourceName?: unknown;
  @IsOptional() azureAuthMode?: unknown;
  @IsOptional() azureEntraTenantId?: unknown;
  @IsOptional() azureEntraClientId?: unknown;
  @IsOptional() azureEntraClientSecret?: unknown;
  @IsOptional() azureManagedClientId?: unknown;
  @IsOptional() azureEntraScope?: unknown;
  @IsOptional() azureAuthorityHost?: unknown;
  @IsOptional() awsAuthType?: unknown;
  @IsOptional() awsRegion?: unknown;
  @IsOptional() awsAccessKeyId?: unknown;
  @IsOptional() awsSecretAccessKey?: unknown;
  @IsOptional() awsSessionToken?: unknown;
  @IsOptional() awsRoleArn?: unknown;
  @IsOptional() awsExternalId?: unknown;
  @IsOptional() awsStsEndpoint?: unknown;
  @IsOptional() vertexAuthType?: unknown;
  @IsOptional() vertexProjectId?: unknown;
  @IsOptional() vertexRegion?: unknown;
  @IsOptional() vertexServiceAccountJson?: unknown;
  @IsOptional() workersAiAccountId?: unknown;
  @IsOptional() huggingfaceBaseUrl?: unknown;
  @IsOptional() customHost?: unknown;
  @IsOptional() customHeaders?: unknown;
  @IsOptional() openaiOrganization?: unknown;
  @IsOptional() openaiProject?: unknown;
  @IsOptional() anthropicVersion?: unknown;
  @IsOptional() anthropicBeta?: unknown;
}

/** The camelCase setting names a virtual key body may carry. */
export const VIRTUAL_KEY_SETTING_FIELDS = [
  'apiVersion',
  'deploymentName',
  'deploymentConfig',
  'resourceName',
  'azureAuthMode',
  'azureEntraTenantId',
  'azureEntraClientId',
  'azureEntraClientSecret',
  'azureManagedClientId',
  'azureEntraScope',
  'azureAuthorityHost',
  'awsAuthType',
  'awsRegion',
  'awsAccessKeyId',
  'awsSecretAccessKey',
  'awsSessionToken',
  'awsRoleArn',
  'awsExternalId',
  'awsStsEndpoint',
  'vertexAuthType',
  'vertexProjectId',
  'vertexRegion',
  'vertexServiceAccountJson',
  'workersAiAccountId',
  'huggingfaceBaseUrl',
  'customHost',
  'customHeaders',
  'openaiOrganization',
  'openaiProject',
  'anthropicVersion',
  'anthropicBeta',
] as const;

class VirtualKeyFieldsDto extends VirtualKeySettingsDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  key?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  note?: string | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => UsageLimitsDto)
  usage_limits?: UsageLimitsDto | null;

  @RateLimits(3)
  rate_limits?: Record<string, unknown>[] | null;

  @IsOptional()
  @IsDateString({ strict: true })
  expires_at?: string | null;

  @SecretMappings()
  secret_mappings?: SecretMappingDto[];

  @IsOptional()
  @IsTags()
  tags?: Record<string, string> | null;
}

export class CreateVirtualKeyDto extends VirtualKeyFieldsDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  /** Provider name, for a virtual key with its own credentials. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  provider?: string;

  /** Or: the integration (slug or id) whose credentials it uses. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  integration_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @Slug()
  slug?: string;
}

export class UpdateVirtualKeyDto extends VirtualKeyFieldsDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsBoolean()
  reset_usage?: boolean;

  @IsOptional()
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';
}
