import { Type } from 'class-transformer';
import {
  IsDateString,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '@switchboard/common';

export class ListAuditLogsQueryDto extends PageQueryDto {
  /** Defaults to 30 days before end_time. */
  @IsOptional() @IsDateString() start_time?: string;
  /** Defaults to now. */
  @IsOptional() @IsDateString() end_time?: string;
  /** Accepted for compatibility; the caller's own organisation is always used. */
  @IsOptional() @IsUUID() organisation_id?: string;
  @IsOptional() @IsIn(['POST', 'PUT', 'PATCH', 'DELETE']) method?: string;
  @IsOptional() @IsString() @MaxLength(2048) uri?: string;
  @IsOptional() @IsString() @MaxLength(128) request_id?: string;
  @IsOptional() @IsUUID() user_id?: string;
  @IsOptional() @IsIn(['user', 'api_key', 'anonymous']) user_type?: 'user' | 'api_key' | 'anonymous';
  @IsOptional() @IsUUID() workspace_id?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(599) response_status_code?: number;
  @IsOptional() @IsString() @MaxLength(64) resource_type?: string;
  @IsOptional() @IsString() @MaxLength(64) action?: string;
  @IsOptional() @IsString() @MaxLength(64) client_ip?: string;
}
