import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDateString,
  IsEmail,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto, RateLimitDto, UsageLimitsDto } from '@switchboard/common';

export class ApiKeyDefaultsDto {
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  config_id?: string;

  @IsOptional()
  @IsBoolean()
  allow_config_override?: boolean;
}

class ApiKeyFieldsDto {
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => RateLimitDto)
  rate_limits?: RateLimitDto[] | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => UsageLimitsDto)
  usage_limits?: UsageLimitsDto | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => ApiKeyDefaultsDto)
  defaults?: ApiKeyDefaultsDto;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsEmail({}, { each: true })
  alert_emails?: string[];

  @IsOptional()
  @IsDateString({ strict: true })
  expires_at?: string | null;
}

export class CreateApiKeyDto extends ApiKeyFieldsDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  scopes: string[];

  /** Workspace id or slug; for workspace keys. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsUUID()
  organisation_id?: string;

  @IsOptional()
  @IsUUID()
  user_id?: string;
}

export class UpdateApiKeyDto extends ApiKeyFieldsDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  scopes?: string[];
}

export class RotateApiKeyDto {
  /** How long the previous key keeps working, at least 30 minutes (the reference's minimum). */
  @IsOptional()
  @IsInt()
  @Min(1_800_000)
  @Max(90 * 24 * 3_600_000)
  key_transition_period_ms?: number;
}

export class ListApiKeysQueryDto extends PageQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;
}
