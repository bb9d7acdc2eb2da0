import { Type } from 'class-transformer';
import {
  IsIn,
  IsNumber,
  IsObject,
  IsOptional,
  Min,
  ValidateNested,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  Validate,
} from 'class-validator';

const Multiplier = () => (target: object, property: string) => {
  IsOptional()(target, property);
  IsNumber({ allowNaN: false, allowInfinity: false })(target, property);
  Min(0)(target, property);
};

export class ImageMultiplierDto {
  @Multiplier() default?: number | null;
}

@ValidatorConstraint({ name: 'isMultiplierMap' })
class IsMultiplierMap implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (value === null || value === undefined) return true;
    if (typeof value !== 'object' || Array.isArray(value)) return false;
    const entries = Object.entries(value as Record<string, unknown>);
    return (
      entries.length <= 100 &&
      entries.every(
        ([key, inner]) =>
          /^[A-Za-z0-9_.-]{1,128}$/.test(key) &&
          (inner === null || (typeof inner === 'number' && Number.isFinite(inner) && inner >= 0)),
      )
    );
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must map unit names to non-negative numbers or null`;
  }
}

/**
 * `pricing_adjustments.multiplier` (reference PricingMultiplier): unknown keys are refused; a
 * missing or null key inherits `default`.
 */
export class PricingMultiplierDto {
  @Multiplier() default?: number | null;
  @Multiplier() request_token?: number | null;
  @Multiplier() response_token?: number | null;
  @Multiplier() cache_read_input_token?: number | null;
  @Multiplier() cache_write_input_token?: number | null;
  @Multiplier() cache_read_audio_input_token?: number | null;
  @Multiplier() request_audio_token?: number | null;
  @Multiplier() response_audio_token?: number | null;
  @Multiplier() reasoning_token?: number | null;
  @Multiplier() prediction_accepted_token?: number | null;
  @Multiplier() prediction_rejected_token?: number | null;
  @Multiplier() request_image_token?: number | null;
  @Multiplier() response_image_token?: number | null;
  @Multiplier() request_text_token?: number | null;
  @Multiplier() response_text_token?: number | null;
  @Multiplier() cache_read_image_input_token?: number | null;
  @Multiplier() cache_read_text_input_token?: number | null;
  @Multiplier() cache_write_text_input_token?: number | null;
  @Multiplier() cache_write_image_input_token?: number | null;

  @IsOptional()
  @ValidateNested()
  @Type(() => ImageMultiplierDto)
  image?: ImageMultiplierDto | null;

  @IsOptional()
  @Validate(IsMultiplierMap)
  additional_units?: Record<string, number | null> | null;
}

export class PricingAdjustmentsDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => PricingMultiplierDto)
  multiplier?: PricingMultiplierDto | null;
}

/**
 * A model's own pricing (reference PricingConfig): prices in US cents per unit, in the catalog's
 * shape (`{ "request_token": { "price": 0.0003 } }`); checked by the cost function's parser.
 */
export class PricingConfigDto {
  @IsOptional()
  @IsIn(['static'])
  type?: 'static';

  @IsObject()
  pay_as_you_go: Record<string, unknown>;

  @IsOptional()
  @IsObject()
  calculate?: Record<string, unknown> | null;

  @IsOptional()
  @IsIn(['USD'])
  currency?: 'USD';
}
