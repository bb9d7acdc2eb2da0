import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto, RateLimitDto, UsageLimitsDto } from '@switchboard/common';

export class WorkspaceDefaultsDto {
  @IsOptional()
  @IsObject()
  metadata?: Record<string, string>;
}

export class ApiKeyPolicyDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10000)
  max_user_keys_per_user?: number | null;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3650)
  default_expiry_days?: number | null;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3650)
  max_expiry_days?: number | null;
}

export class CreateWorkspaceDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  @Matches(/^[a-z0-9][a-z0-9-_]*$/, { message: 'slug must be lower-case letters, digits, - and _' })
  slug?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => WorkspaceDefaultsDto)
  defaults?: WorkspaceDefaultsDto;

  /** Existing organisation users to add as members. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsUUID('all', { each: true })
  users?: string[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => UsageLimitsDto)
  usage_limits?: UsageLimitsDto[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => RateLimitDto)
  rate_limits?: RateLimitDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => ApiKeyPolicyDto)
  api_key_policy?: ApiKeyPolicyDto;
}

export class UpdateWorkspaceDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => WorkspaceDefaultsDto)
  defaults?: WorkspaceDefaultsDto;

  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => UsageLimitsDto)
  usage_limits?: UsageLimitsDto[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => RateLimitDto)
  rate_limits?: RateLimitDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => ApiKeyPolicyDto)
  api_key_policy?: ApiKeyPolicyDto;
}

export class ListWorkspacesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  exact_name?: string;

  /** Comma-separated: `active`, `archived`. */
  @IsOptional()
  @Matches(/^(active|archived)(,(active|archived))*$/, {
    message: 'status must be a comma-separated list of active, archived',
  })
  status?: string;
}

export class AddMemberItemDto {
  @IsUUID()
  id: string;

  @IsIn(['admin', 'manager', 'member'])
  role: 'admin' | 'manager' | 'member';
}

export class AddMembersDto {
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => AddMemberItemDto)
  users: AddMemberItemDto[];
}

export class UpdateMemberDto {
  @IsIn(['admin', 'manager', 'member'])
  role: 'admin' | 'manager' | 'member';
}

export class ListMembersQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(['admin', 'manager', 'member'])
  role?: 'admin' | 'manager' | 'member';

  @IsOptional()
  @IsString()
  @MaxLength(320)
  email?: string;
}

export class SecuritySettingsDto {
  @IsOptional() @IsBoolean() membersViewAllData?: boolean | null;
  @IsOptional() @IsBoolean() managersViewAllData?: boolean | null;
  @IsOptional() @IsBoolean() membersViewPrompts?: boolean | null;
  @IsOptional() @IsBoolean() membersWritePrompts?: boolean | null;
  @IsOptional() @IsBoolean() managersViewPrompts?: boolean | null;
  @IsOptional() @IsBoolean() managersWritePrompts?: boolean | null;
  @IsOptional() @IsBoolean() membersViewAnalytics?: boolean | null;
  @IsOptional() @IsBoolean() managersViewAnalytics?: boolean | null;
}
