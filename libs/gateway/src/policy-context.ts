import type { InlineLimitSource, Principal } from '@switchboard/common';
import type { ResolvedProvider } from '@switchboard/integrations';
import type { InlineLimits, InlineRateLimit, InlineUsageLimit } from '@switchboard/policies';

/**
 * The inline limits a request is held to: its API key's, its workspace's, and its stored
 * provider's (and the provider's integration grant). The enforcer compiles each object once and
 * recognises it by identity, so each is built once per cached principal or stored provider.
 */
const ofPrincipal = new WeakMap<Principal, readonly InlineLimits[]>();
const ofProvider = new WeakMap<ResolvedProvider, readonly InlineLimits[]>();
const NONE: readonly InlineLimits[] = [];

function fromSource(
  kind: 'api_key' | 'workspace',
  source: InlineLimitSource,
  workspaceId: string | null,
): InlineLimits {
  return {
    kind,
    id: source.id,
    name: source.name,
    workspaceId,
    rateLimits: (source.rateLimits as InlineRateLimit[] | null) ?? null,
    usageLimits: (source.usageLimits as InlineUsageLimit | InlineUsageLimit[] | null) ?? null,
    alertEmails: source.alertEmails,
  };
}

function principalLimits(principal: Principal): readonly InlineLimits[] {
  let limits = ofPrincipal.get(principal);
  if (!limits) {
    const list: InlineLimits[] = [];
    if (principal.apiKey?.limits)
      list.push(fromSource('api_key', principal.apiKey.limits, principal.workspaceId));
    if (principal.workspaceLimits)
      list.push(fromSource('workspace', principal.workspaceLimits, principal.workspaceId));
    limits = list.length > 0 ? list : NONE;
    ofPrincipal.set(principal, limits);
  }
  return limits;
}

/** A stored provider's own limits and its integration grant's, empty when it has none. */
export function providerLimits(provider: ResolvedProvider): readonly InlineLimits[] {
  let limits = ofProvider.get(provider);
  if (!limits) {
    const list: InlineLimits[] = [];
    const own = {
      rateLimits: provider.rateLimits as InlineRateLimit[] | null,
      usageLimits: provider.usageLimits as InlineUsageLimit | null,
    };
    if ((own.rateLimits?.length ?? 0) > 0 || own.usageLimits) {
      list.push({
        kind: 'provider',
        id: provider.providerId,
        name: provider.slug,
        workspaceId: provider.workspaceId,
        ...own,
      });
    }
    // What the integration's grant allows this workspace, counted over all its providers there.
    const grant = provider.integrationLimits;
    if (grant && ((grant.rateLimits?.length ?? 0) > 0 || grant.usageLimits)) {
      list.push({
        kind: 'provider',
        id: `grant:${provider.integrationId}:${provider.workspaceId}`,
        name: provider.integrationSlug,
        workspaceId: provider.workspaceId,
        rateLimits: grant.rateLimits as InlineRateLimit[] | null,
        usageLimits: grant.usageLimits as InlineUsageLimit | null,
      });
    }
    limits = list.length > 0 ? list : NONE;
    ofProvider.set(provider, limits);
  }
  return limits;
}

export function inlineLimitsFor(
  principal: Principal,
  provider: ResolvedProvider | undefined,
): readonly InlineLimits[] {
  const own = principalLimits(principal);
  if (!provider) return own;
  const stored = providerLimits(provider);
  if (stored.length === 0) return own;
  if (own.length === 0) return stored;
  return [...own, ...stored];
}
