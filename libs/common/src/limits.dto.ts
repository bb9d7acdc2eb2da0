import {
  IsDateString,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  Max,
  Min,
  ValidateIf,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  Validate,
} from 'class-validator';

@ValidatorConstraint({ name: 'exclusiveWithPeriodicReset' })
class ExclusiveWithPeriodicReset implements ValidatorConstraintInterface {
  validate(_value: unknown, args: ValidationArguments): boolean {
    const limits = args.object as UsageLimitsDto;
    return !(limits.periodic_reset != null && limits.periodic_reset_days != null);
  }
  defaultMessage(): string {
    return 'periodic_reset_days cannot be combined with periodic_reset';
  }
}

/** Usage limits (budgets) as the spec bounds them; enforced by the policies area. */
export class UsageLimitsDto {
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  credit_limit?: number | null;

  @IsOptional()
  @IsIn(['cost', 'tokens'])
  type?: 'cost' | 'tokens';

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  alert_threshold?: number | null;

  @IsOptional()
  @IsIn(['weekly', 'monthly', null])
  periodic_reset?: 'weekly' | 'monthly' | null;

  @ValidateIf(
    (limits: UsageLimitsDto) =>
      limits.periodic_reset_days !== undefined && limits.periodic_reset_days !== null,
  )
  @IsInt()
  @Min(1)
  @Max(365)
  @Validate(ExclusiveWithPeriodicReset)
  periodic_reset_days?: number | null;

  @IsOptional()
  @IsDateString({ strict: true })
  next_usage_reset_at?: string | null;
}

export class RateLimitDto {
  @IsIn(['requests', 'tokens'])
  type: 'requests' | 'tokens';

  @IsIn(['rpm', 'rph', 'rpd'])
  unit: 'rpm' | 'rph' | 'rpd';

  @IsInt()
  @Min(1)
  value: number;
}
