import { Type } from 'class-transformer';
import {
  IsDateString,
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
  Validate,
  ValidateNested,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { PageQueryDto } from '@switchboard/common';

const MAX_METADATA_ENTRIES = 64;
const METADATA_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Metadata values are strings, as the gateway's `x-gateway-metadata` header carries them. */
export function isStringMap(
  value: unknown,
  maxEntries = MAX_METADATA_ENTRIES,
): value is Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= maxEntries &&
    entries.every(
      ([key, inner]) => METADATA_KEY.test(key) && typeof inner === 'string' && inner.length <= 1024,
    )
  );
}

@ValidatorConstraint({ name: 'stringMap' })
class StringMapConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return value === undefined || isStringMap(value, 256);
  }
  defaultMessage(): string {
    return '$property must be an object of string values with keys of letters, digits and _.:- ';
  }
}

@ValidatorConstraint({ name: 'metadataFilter' })
class MetadataFilterConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      return isStringMap(JSON.parse(value), 16);
    } catch {
      return false;
    }
  }
  defaultMessage(): string {
    return '$property must be a JSON object of string values, e.g. {"env":"prod"}';
  }
}

export class CustomLogRequestDto {
  @IsString() @MaxLength(2048) url: string;
  @IsOptional() @IsIn(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) method?: string;
  @IsOptional() @Validate(StringMapConstraint) headers?: Record<string, string>;
  @IsObject() body: Record<string, unknown>;
}

export class CustomLogResponseDto {
  @IsOptional() @IsInt() @Min(100) @Max(599) status?: number;
  @IsOptional() @Validate(StringMapConstraint) headers?: Record<string, string>;
  @IsObject() body: Record<string, unknown>;
  /** Milliseconds. */
  @IsOptional() @IsInt() @Min(0) response_time?: number;
}

/** One custom log as the reference's `CustomLog`: a request/response pair made outside the gateway. */
export class CustomLogDto {
  @ValidateNested() @Type(() => CustomLogRequestDto) request: CustomLogRequestDto;
  @ValidateNested() @Type(() => CustomLogResponseDto) response: CustomLogResponseDto;
  /** `trace_id`, `span_id`, `span_name`, and any other string values. */
  @IsOptional() @Validate(StringMapConstraint) metadata?: Record<string, string>;
}

export class ListLogsQueryDto extends PageQueryDto {
  /** Defaults to 30 days before end_time. */
  @IsOptional() @IsDateString() start_time?: string;
  /** Defaults to now. */
  @IsOptional() @IsDateString() end_time?: string;
  @IsOptional() @IsUUID() workspace_id?: string;
  @IsOptional() @IsUUID() api_key_id?: string;
  @IsOptional() @IsString() @MaxLength(64) provider?: string;
  @IsOptional() @IsString() @MaxLength(255) model?: string;
  /** One status code or several, comma-separated: `429,500`. */
  @IsOptional() @Matches(/^[1-5]\d\d(,[1-5]\d\d){0,19}$/) status_code?: string;
  @IsOptional() @IsString() @MaxLength(128) trace_id?: string;
  /** A JSON object; logs whose metadata holds every key with that value match. */
  @IsOptional() @Validate(MetadataFilterConstraint) metadata?: string;
}

export interface LogView {
  object: 'log';
  id: string;
  /** The reference names the id `_id`; both are sent so its clients work unchanged. */
  _id: string;
  organisation_id: string;
  workspace_id: string | null;
  created_at: string;
  request: { url: string; method: string; body?: unknown };
  response: { status: number; responseTime: number; body?: unknown };
  metrics: Record<string, unknown>;
}

export interface InsertLogsResult {
  status: 'success';
  log_ids: string[];
}
