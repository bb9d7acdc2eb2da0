import { Type, plainToInstance, Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { RateLimitDto } from '@switchboard/common';

export const SLUG_PATTERN = /^[a-zA-Z0-9_-]+$/;
export const SLUG_MESSAGE = '$property must hold only letters, digits, _ and -';

/** One `secret_mappings` entry: a credential field filled from a secret reference at run time. */
export class SecretMappingDto {
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  target_field: string;

  /** UUID or slug of the secret reference. */
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  secret_reference_id: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  secret_key?: string | null;

  @IsOptional()
  @IsIn(['json', 'string'])
  value_format?: 'json' | 'string' | null;
}

export const SecretMappings = () => (target: object, property: string) => {
  IsOptional()(target, property);
  IsArray()(target, property);
  ArrayMaxSize(20)(target, property);
  ValidateNested({ each: true })(target, property);
  Type(() => SecretMappingDto)(target, property);
};

/**
 * `rate_limits`: the reference sends one object on create and answers an array; both are
 * accepted and stored as an array.
 */
export const RateLimits =
  (max = 3) =>
  (target: object, property: string) => {
    IsOptional()(target, property);
    Transform(({ value }: { value: unknown }) => {
      if (value === null || value === undefined) return value;
      const list = Array.isArray(value) ? value : [value];
      return list.map((item) =>
        item && typeof item === 'object' ? plainToInstance(RateLimitDto, item) : item,
      );
    })(target, property);
    IsArray()(target, property);
    ArrayMaxSize(max)(target, property);
    ValidateNested({ each: true })(target, property);
  };

export const Slug = () => (target: object, property: string) => {
  IsString()(target, property);
  MinLength(1)(target, property);
  MaxLength(255)(target, property);
  Matches(SLUG_PATTERN, { message: SLUG_MESSAGE })(target, property);
};
