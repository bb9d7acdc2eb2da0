import { createHash } from 'node:crypto';
import type { PolicyCondition, PolicyGroupBy } from './policy.types';

/**
 * Which requests a policy applies to, and which group a request counts in. Conditions are ANDed
 * exact matches; group_by keys make the value key (`api_key:…|metadata.team:…`). A request that
 * lacks a grouped metadata field is not counted by that policy: it belongs to no group.
 */
export interface MatchContext {
  organisationId: string;
  workspaceId: string | null;
  apiKeyId: string | null;
  userId: string | null;
  metadata: Readonly<Record<string, string>>;
}

export const METADATA_PREFIX = 'metadata.';
/** `metadata._user` falls back to the calling user when the request does not set it. */
export const USER_METADATA_FIELD = '_user';
const METADATA_FIELD = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** Value keys longer than this are stored as a hash (the unique index has a size limit). */
const MAX_VALUE_KEY_LENGTH = 500;

enum Source {
  ApiKey,
  Organisation,
  Workspace,
  Metadata,
}

interface Selector {
  key: string;
  source: Source;
  field: string;
}

export interface CompiledCondition extends Selector {
  value: string;
}

export function isPolicyKey(key: unknown): key is string {
  if (typeof key !== 'string') return false;
  if (key === 'api_key' || key === 'organisation_id' || key === 'workspace_id') return true;
  return key.startsWith(METADATA_PREFIX) && METADATA_FIELD.test(key.slice(METADATA_PREFIX.length));
}

function selector(key: string): Selector {
  switch (key) {
    case 'api_key':
      return { key, source: Source.ApiKey, field: '' };
    case 'organisation_id':
      return { key, source: Source.Organisation, field: '' };
    case 'workspace_id':
      return { key, source: Source.Workspace, field: '' };
    default:
      if (!isPolicyKey(key)) throw new Error(`Not a policy key: ${key}`);
      return { key, source: Source.Metadata, field: key.slice(METADATA_PREFIX.length) };
  }
}

function read(context: MatchContext, selected: Selector): string | null | undefined {
  switch (selected.source) {
    case Source.ApiKey:
      return context.apiKeyId;
    case Source.Organisation:
      return context.organisationId;
    case Source.Workspace:
      return context.workspaceId;
    default: {
      const value = context.metadata[selected.field];
      if (value === undefined && selected.field === USER_METADATA_FIELD) return context.userId;
      return value;
    }
  }
}

export class PolicyMatcher {
  private readonly conditions: CompiledCondition[];
  private readonly groups: Selector[];

  constructor(
    private readonly organisationId: string,
    /** Null: every workspace of the organisation. */
    private readonly workspaceId: string | null,
    conditions: readonly PolicyCondition[],
    groupBy: readonly PolicyGroupBy[],
  ) {
    this.conditions = conditions.map((condition) => ({ ...selector(condition.key), value: condition.value }));
    this.groups = groupBy.map((group) => selector(group.key));
  }

  matches(context: MatchContext): boolean {
    if (context.organisationId !== this.organisationId) return false;
    if (this.workspaceId !== null && context.workspaceId !== this.workspaceId) return false;
    for (const condition of this.conditions) {
      if (read(context, condition) !== condition.value) return false;
    }
    return true;
  }

  /** The group the request counts in, or null when a grouped value is missing. */
  valueKey(context: MatchContext): string | null {
    let key = '';
    for (let index = 0; index < this.groups.length; index++) {
      const group = this.groups[index];
      const value = read(context, group);
      if (value === undefined || value === null || value === '') return null;
      key += index === 0 ? `${group.key}:${value}` : `|${group.key}:${value}`;
    }
    return key.length > MAX_VALUE_KEY_LENGTH
      ? `sha256:${createHash('sha256').update(key).digest('hex')}`
      : key;
  }

  /** The group values of a request, for the entity record. */
  groupValues(context: MatchContext): Record<string, string> {
    const values: Record<string, string> = {};
    for (const group of this.groups) {
      const value = read(context, group);
      if (value !== undefined && value !== null) values[group.key] = value;
    }
    return values;
  }
}
