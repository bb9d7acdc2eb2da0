import type { CacheStatus } from './response-cache';
import type { RoutingResult } from './routing-engine';

/**
 * Response headers that say how an answer was made. Neither the spec nor the reference names
 * them, so they carry our prefix.
 */
export const ROUTING_HEADERS = {
  retryCount: 'x-gateway-retry-count',
  targetIndex: 'x-gateway-target-index',
  cacheStatus: 'x-gateway-cache-status',
} as const;

/** Request headers of the cache. */
export const CACHE_REQUEST_HEADERS = {
  namespace: 'x-gateway-cache-namespace',
  forceRefresh: 'x-gateway-cache-force-refresh',
} as const;

/**
 * The headers for an answer: the cache status always; the retry count and the served target's
 * index path when routing ran (the index only when the config has targets to choose from).
 */
export function routingHeaders(
  cacheStatus: CacheStatus,
  routing?: Pick<RoutingResult, 'retryCount' | 'servedBy'> | null,
): Record<string, string> {
  const headers: Record<string, string> = { [ROUTING_HEADERS.cacheStatus]: cacheStatus };
  if (routing) {
    headers[ROUTING_HEADERS.retryCount] = String(routing.retryCount);
    if (routing.servedBy) headers[ROUTING_HEADERS.targetIndex] = routing.servedBy;
  }
  return headers;
}
