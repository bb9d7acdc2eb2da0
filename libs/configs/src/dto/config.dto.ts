import { IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '@switchboard/common';

/** Slugs are URL-safe and never look like an id, so a path segment is unambiguous. */
export const CONFIG_SLUG_PATTERN = /^(?![0-9a-f]{8}-[0-9a-f]{4}-)[a-z0-9][a-z0-9_-]{0,254}$/;

/** `isDefault` is an integer in the reference (0 or 1); true and false are accepted too. */
const DEFAULT_FLAG = [0, 1, true, false];

export class CreateConfigDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;

  /** The gateway config object. */
  @IsObject()
  config: Record<string, unknown>;

  @IsOptional()
  @IsIn(DEFAULT_FLAG)
  isDefault?: number | boolean;

  /** Alias of isDefault. */
  @IsOptional()
  @IsIn(DEFAULT_FLAG)
  is_default?: number | boolean;

  /** Required for callers not bound to a workspace (admin keys, owners, admins). */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  /** Generated from the name when absent. */
  @IsOptional()
  @IsString()
  @Matches(CONFIG_SLUG_PATTERN, { message: 'slug must be lower-case letters, digits, - and _ (not an id)' })
  slug?: string;
}

export class UpdateConfigDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;

  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';

  @IsOptional()
  @IsIn(DEFAULT_FLAG)
  isDefault?: number | boolean;

  /** Alias of isDefault. */
  @IsOptional()
  @IsIn(DEFAULT_FLAG)
  is_default?: number | boolean;
}

export class ListConfigsQueryDto extends PageQueryDto {
  @IsOptional()
  @IsString()
  @MaxLength(255)
  workspace_id?: string;

  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';
}
