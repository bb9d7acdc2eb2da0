/**
 * Who is calling, resolved once at authentication and cached with the key. The guard then only
 * does set lookups; services use the ids for row-level checks.
 */
export type ApiKeyType =
  'organisation-service' | 'organisation-user' | 'workspace-service' | 'workspace-user';
export type OrganisationRole = 'owner' | 'admin' | 'member';
export type WorkspaceRole = 'admin' | 'manager' | 'member';

/** Limits stored inline on an API key or a workspace (shapes of limits.dto.ts), for the policies. */
export interface InlineLimitSource {
  id: string;
  name: string | null;
  rateLimits: readonly unknown[] | null;
  usageLimits: unknown;
  alertEmails: readonly string[] | null;
}

export interface Principal {
  organisationId: string;
  /** Present for API-key authentication. */
  apiKey?: {
    id: string;
    type: ApiKeyType;
    scopes: readonly string[];
    defaults: {
      metadata?: Record<string, unknown>;
      config_id?: string;
      allow_config_override?: boolean;
    } | null;
    /** The key's own usage and rate limits, when it has any. */
    limits: InlineLimitSource | null;
  };
  /** The workspace's own usage and rate limits, when it has any. */
  workspaceLimits?: InlineLimitSource | null;
  /** The human behind a user key (or a JWT). */
  user?: { id: string; email: string; role: OrganisationRole };
  /** Set for workspace keys: the one workspace they act in. Null for organisation-wide principals. */
  workspaceId: string | null;
  /** The user's role in `workspaceId`, for workspace user keys. */
  workspaceRole: WorkspaceRole | null;
  /** True for principals with organisation-wide reach (admin keys, owners, admins). */
  organisationWide: boolean;
  /** Effective permissions: role matrix ∩ capability matrix ∩ key scopes. */
  permissions: ReadonlySet<string>;
}
