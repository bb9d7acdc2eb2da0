import { randomUUID } from 'node:crypto';
import type { EnforcementContext } from '@switchboard/policies';

/**
 * The policy suites' request contexts: the scope `ids()` gives (read at each call, since suites set
 * their ids in beforeAll), a fresh API key id, no user, no metadata, and `over` on top.
 */
export function enforcementContexts(
  ids: () => { organisationId: string; workspaceId: string },
): (over?: Partial<EnforcementContext>) => EnforcementContext {
  return (over = {}) => ({
    ...ids(),
    apiKeyId: randomUUID(),
    userId: null,
    metadata: {},
    ...over,
  });
}
