import { AppError } from '@switchboard/common';
import type {
  DirectoryLookup,
  ProviderDirectory,
  ProviderRefusal,
  ResolvedProvider,
} from '@switchboard/integrations';
import { getProviderAdapter } from '@switchboard/providers';
import { GatewayErrors } from './gateway.errors';
import type { LookupResult, ResolvedTarget, TargetLookups } from './provider-resolution';

/** Stored providers are shared frozen objects, so each one's target is built once. */
const targets = new WeakMap<ResolvedProvider, ResolvedTarget>();

export function targetOfStored(provider: ResolvedProvider): ResolvedTarget {
  let target = targets.get(provider);
  if (!target) {
    const adapter = getProviderAdapter(provider.providerName);
    if (!adapter) throw GatewayErrors.unknownProvider(provider.providerName);
    target = {
      adapter,
      credentials: provider.credentials,
      providerSlug: provider.slug,
      overrideParams: null,
      stored: provider,
    };
    targets.set(provider, target);
  }
  return target;
}

/** A refusal of the directory (expired, not granted, model not allowed, ...) as the answer's error. */
export function refusalError(refusal: ProviderRefusal, param: string): AppError {
  return new AppError(refusal.status, refusal.reason, refusal.message, param);
}

function settle(lookup: DirectoryLookup, param: string): ResolvedTarget | null {
  if (!lookup) return null;
  if (lookup.refused) throw refusalError(lookup, param);
  return targetOfStored(lookup);
}

function settleEither(lookup: DirectoryLookup | Promise<DirectoryLookup>, param: string): LookupResult {
  return lookup instanceof Promise ? lookup.then((value) => settle(value, param)) : settle(lookup, param);
}

/**
 * The lookups of `@slug` and virtual keys for a principal of `workspaceId`. Stored providers
 * belong to a workspace; a principal without one names none (its lookups find nothing: 404).
 */
export function storedProviderLookups(
  directory: ProviderDirectory,
  workspaceId: string | null,
): TargetLookups {
  if (!workspaceId) return {};
  return {
    providerSlug: (slug) =>
      settleEither(directory.lookupProviderSlug(workspaceId, slug), 'x-gateway-provider'),
    virtualKey: (slug) =>
      settleEither(directory.lookupVirtualKey(workspaceId, slug), 'x-gateway-virtual-key'),
  };
}
