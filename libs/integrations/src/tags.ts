import { Raw, type FindOperator } from 'typeorm';
import {
  ValidationArguments,
  ValidationOptions,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  registerDecorator,
} from 'class-validator';
import { IS_POSTGRES } from '@switchboard/database';
import { IntegrationErrors } from './integrations.errors';

/** Tag keys are plain identifiers, so a filter can be written into a JSON path without quoting games. */
export const TAG_KEY = /^[A-Za-z0-9_.:/-]{1,128}$/;
export const MAX_TAGS = 50;
export const MAX_TAG_VALUE = 256;

/** Why a tags object is invalid, or null when it is a valid one. */
export function tagsProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return 'must be an object of string values';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_TAGS) return `holds at most ${MAX_TAGS} tags`;
  for (const [key, inner] of entries) {
    if (!TAG_KEY.test(key)) return `key '${key}' must be 1-128 letters, digits or '_.:/-'`;
    if (typeof inner !== 'string') return `value of '${key}' must be a string`;
    if (inner.length > MAX_TAG_VALUE) return `value of '${key}' must be at most ${MAX_TAG_VALUE} characters`;
  }
  return null;
}

@ValidatorConstraint({ name: 'isTags' })
class IsTagsConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return value === null || value === undefined || tagsProblem(value) === null;
  }
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} ${tagsProblem(args.value) ?? 'is invalid'}`;
  }
}

/** Custom key-value tags (spec: tags on integrations and providers). */
export function IsTags(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({ target: object.constructor, propertyName, options, validator: IsTagsConstraint });
}

/** The `tags` list filter: a JSON object (`{"env":"prod"}`); every pair must match. */
export function parseTagsFilter(raw: string | undefined): Record<string, string> | null {
  if (raw === undefined || raw === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw IntegrationErrors.invalidField('tags', 'must be a JSON object such as {"env":"prod"}', 'isJson');
  }
  const problem = tagsProblem(parsed);
  if (problem) throw IntegrationErrors.invalidField('tags', problem, 'isTags');
  return parsed as Record<string, string>;
}

/** A where-clause operator matching rows whose `tags` column holds every pair of `filter`. */
export function tagsMatch(filter: Record<string, string>, prefix = 'tag'): FindOperator<unknown> {
  const entries = Object.entries(filter);
  if (IS_POSTGRES) {
    return Raw((column) => `${column} @> CAST(:${prefix}json AS jsonb)`, {
      [`${prefix}json`]: JSON.stringify(filter),
    });
  }
  const parameters: Record<string, string> = {};
  entries.forEach(([key, value], index) => {
    parameters[`${prefix}k${index}`] = `$."${key}"`;
    parameters[`${prefix}v${index}`] = value;
  });
  return Raw(
    (column) =>
      entries.length === 0
        ? '1 = 1'
        : entries
            .map((_entry, index) => `json_extract(${column}, :${prefix}k${index}) = :${prefix}v${index}`)
            .join(' AND '),
    parameters,
  );
}
