import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, CommonErrors } from './app-error';

/** `targets[1].retry.attempts` style path of the first failing field, and the rule it broke. */
export function firstValidationProblem(
  errors: ValidationError[],
  parent = '',
): { param: string; message: string } | null {
  for (const error of errors) {
    const segment = /^\d+$/.test(error.property)
      ? `[${error.property}]`
      : parent
        ? `.${error.property}`
        : error.property;
    const path = `${parent}${segment}`;
    if (error.constraints && Object.keys(error.constraints).length > 0) {
      const [rule, text] = Object.entries(error.constraints)[0];
      const message =
        rule === 'whitelistValidation' ? `Unknown field '${path}'` : text.replace(error.property, path);
      return { param: path, message: `${message} (rule: ${rule})` };
    }
    if (error.children && error.children.length > 0) {
      const nested = firstValidationProblem(error.children, path);
      if (nested) return nested;
    }
  }
  return null;
}

export function validationErrorFactory(errors: ValidationError[]): AppError {
  const problem = firstValidationProblem(errors);
  return CommonErrors.validation(problem?.message ?? 'Invalid request', problem?.param ?? null);
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: validationErrorFactory,
  });
}
