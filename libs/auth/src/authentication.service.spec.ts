import { EventEmitter } from 'node:events';
import { ApiKeysService, hashKey } from '@switchboard/api-keys';
import { AppError, DomainEvents, InvalidationBus, Principal } from '@switchboard/common';
import { IdentityLookupService } from '@switchboard/identity';
import { AuthenticationService, KeyCarrier } from './authentication.service';

/** Workspace service keys by raw key; `status` can be changed by a test to revoke one. */
const KEYS: Record<string, { id: string; status: string }> = {
  'sb-key-one': { id: 'key-1', status: 'active' },
  'sb-key-two': { id: 'key-2', status: 'active' },
};

function service(): { auth: AuthenticationService; lookups: string[] } {
  const lookups: string[] = [];
  const byHash = new Map(Object.entries(KEYS).map(([raw, key]) => [hashKey(raw), key]));
  const apiKeys = {
    findByHash: (hash: string) => {
      lookups.push(hash);
      const key = byHash.get(hash);
      return Promise.resolve(
        key
          ? {
              viaPrevious: false,
              key: {
                ...key,
                name: key.id,
                type: 'workspace-service',
                scopes: ['completions.write'],
                organisation_id: 'org-1',
                workspace_id: 'ws-1',
                user_id: null,
                expires_at: null,
                previous_key_expires_at: null,
                defaults: null,
                rate_limits: [],
                usage_limits: null,
                alert_emails: null,
              },
            }
          : null,
      );
    },
  } as unknown as ApiKeysService;
  const identity = {
    facts: () =>
      Promise.resolve({
        user: null,
        workspace: { id: 'ws-1', name: 'Default', status: 'active', rateLimits: [], usageLimits: [] },
        workspaceRole: null,
      }),
  } as unknown as IdentityLookupService;
  const events = new EventEmitter() as unknown as DomainEvents;
  const bus = { on: () => undefined, publish: () => undefined } as unknown as InvalidationBus;
  return { auth: new AuthenticationService(apiKeys, identity, events, bus), lookups };
}

describe('AuthenticationService.authenticate', () => {
  afterEach(() => {
    KEYS['sb-key-one'].status = 'active';
  });

  it('reads a new key once, then answers from memory without a promise', async () => {
    const { auth, lookups } = service();
    const first = auth.authenticate('sb-key-one');
    expect(first).toBeInstanceOf(Promise);
    expect((await first).apiKey?.id).toBe('key-1');
    const again = auth.authenticate('sb-key-one') as Principal;
    expect(again).not.toBeInstanceOf(Promise);
    expect(again.apiKey?.id).toBe('key-1');
    expect(lookups).toHaveLength(1);
  });

  it('never answers for another key than the one a connection carries now', async () => {
    const { auth } = service();
    const connection: KeyCarrier = {};
    expect((await auth.authenticate('sb-key-one', undefined, connection)).apiKey?.id).toBe('key-1');
    expect((await auth.authenticate('sb-key-two', undefined, connection)).apiKey?.id).toBe('key-2');
    expect((await auth.authenticate('sb-key-one', undefined, connection)).apiKey?.id).toBe('key-1');
    await expect(auth.authenticate('sb-key-one-not', undefined, connection)).rejects.toMatchObject({
      status: 401,
    });
  });

  it('refuses a revoked key on a connection that carried it before, once the cache is told', async () => {
    const { auth } = service();
    const connection: KeyCarrier = {};
    await auth.authenticate('sb-key-one', undefined, connection);
    KEYS['sb-key-one'].status = 'revoked';
    auth.clear();
    const onFailure = jest.fn();
    await expect(auth.authenticate('sb-key-one', onFailure, connection)).rejects.toBeInstanceOf(AppError);
    expect(onFailure).toHaveBeenCalledWith('invalid_api_key', 'key-1');
  });

  it('throws at once for a key known to be unusable', async () => {
    const { auth, lookups } = service();
    await expect(auth.authenticate('sb-unknown')).rejects.toMatchObject({ status: 401 });
    const onFailure = jest.fn();
    expect(() => auth.authenticate('sb-unknown', onFailure)).toThrow(AppError);
    expect(onFailure).toHaveBeenCalledWith('invalid_api_key', null);
    expect(lookups).toHaveLength(1);
  });
});
