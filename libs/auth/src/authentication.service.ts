import { Injectable, OnModuleInit } from '@nestjs/common';
import { effectivePermissions } from '@switchboard/access';
import { ApiKeysService, hashKey } from '@switchboard/api-keys';
import { AppError, DomainEvents, InvalidationBus, Principal } from '@switchboard/common';
import { IdentityLookupService } from '@switchboard/identity';
import { AuthErrors } from './auth.errors';

interface CachedPrincipal {
  principal: Principal | null;
  /** The error to answer with when the key is known to be unusable. */
  failure: AppError | null;
  /** The moment this entry stops being valid: key expiry, transition end, or the safety TTL. */
  validUntil: number;
  apiKeyId: string | null;
}

/** Safety net for a missed invalidation message; changes normally evict at once. */
const CACHE_TTL_MS = 5 * 60 * 1000;
/** Unknown keys are remembered briefly so a client hammering a wrong key costs no queries. */
const NEGATIVE_TTL_MS = 30 * 1000;
const MAX_ENTRIES = 50_000;
export const PRINCIPALS_TOPIC = 'principals';

const kLastKey = Symbol('switchboard.lastApiKey');

/** A client connection, which remembers the last API key it carried and the key's hash. */
export interface KeyCarrier {
  [kLastKey]?: { raw: string; hash: string };
}

function hashOnConnection(connection: KeyCarrier, rawKey: string): string {
  const last = connection[kLastKey];
  if (last !== undefined && last.raw === rawKey) return last.hash;
  const hash = hashKey(rawKey);
  connection[kLastKey] = { raw: rawKey, hash };
  return hash;
}

function principalOf(
  entry: CachedPrincipal,
  onFailure: ((code: string, apiKeyId: string | null) => void) | undefined,
): Principal {
  if (entry.failure || !entry.principal) {
    const failure = entry.failure ?? AuthErrors.invalidKey();
    onFailure?.(failure.code, entry.apiKeyId);
    throw failure;
  }
  return entry.principal;
}

/**
 * Resolves `x-gateway-api-key` to a principal. Warm lookups are one hash and one Map read; the
 * database is read only on a miss, and every change to keys, users, memberships or workspaces
 * empties the cache on every replica.
 */
@Injectable()
export class AuthenticationService implements OnModuleInit {
  private readonly cache = new Map<string, CachedPrincipal>();
  private readonly pending = new Map<string, Promise<CachedPrincipal>>();
  private generation = 0;

  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly identity: IdentityLookupService,
    private readonly events: DomainEvents,
    private readonly bus: InvalidationBus,
  ) {}

  onModuleInit(): void {
    this.bus.on(PRINCIPALS_TOPIC, () => this.clear());
    this.events.on('principals.changed', () => this.bus.publish(PRINCIPALS_TOPIC));
  }

  clear(): void {
    this.generation += 1;
    this.cache.clear();
    this.pending.clear();
  }

  /**
   * The principal of a raw key; throws the 401 to answer with, and `onFailure` learns the key id
   * for the audit trail. A key known to the cache is answered at once, without a promise; only a
   * miss returns one (it reads the database).
   *
   * `connection` (the client's socket) remembers the last key it carried and that key's hash, so
   * that a keep-alive client does not pay for a sha256 on every request: on loopback that was
   * 15 µs of each call. The raw key is held no longer than the connection that carries it (the
   * cache of principals is keyed by hash only), and a revoked key is refused at once as before,
   * since the principal is looked up on every request.
   */
  authenticate(
    rawKey: string,
    onFailure?: (code: string, apiKeyId: string | null) => void,
    connection?: KeyCarrier,
  ): Principal | Promise<Principal> {
    const hash = connection ? hashOnConnection(connection, rawKey) : hashKey(rawKey);
    const entry = this.cache.get(hash);
    if (entry && entry.validUntil > Date.now()) return principalOf(entry, onFailure);
    return this.load(hash).then((loaded) => principalOf(loaded, onFailure));
  }

  private load(hash: string): Promise<CachedPrincipal> {
    // Concurrent first requests with one key share a single database read.
    const inFlight = this.pending.get(hash);
    if (inFlight) return inFlight;
    const generation = this.generation;
    const promise = this.resolve(hash)
      .then((entry) => {
        if (generation === this.generation) {
          if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
          this.cache.set(hash, entry);
        }
        return entry;
      })
      .finally(() => this.pending.delete(hash));
    this.pending.set(hash, promise);
    return promise;
  }

  private async resolve(hash: string): Promise<CachedPrincipal> {
    const now = Date.now();
    const found = await this.apiKeys.findByHash(hash);
    if (!found)
      return {
        principal: null,
        failure: AuthErrors.invalidKey(),
        validUntil: now + NEGATIVE_TTL_MS,
        apiKeyId: null,
      };
    const { key, viaPrevious } = found;
    const fail = (failure: AppError): CachedPrincipal => ({
      principal: null,
      failure,
      validUntil: now + CACHE_TTL_MS,
      apiKeyId: key.id,
    });
    if (viaPrevious && (!key.previous_key_expires_at || key.previous_key_expires_at.getTime() <= now)) {
      return fail(AuthErrors.invalidKey());
    }
    if (key.status === 'expired' || (key.expires_at && key.expires_at.getTime() <= now))
      return fail(AuthErrors.expiredKey());
    if (key.status !== 'active') return fail(AuthErrors.invalidKey());
    const facts = await this.identity.facts(key.organisation_id, key.user_id, key.workspace_id);
    if (key.user_id && !facts.user) return fail(AuthErrors.invalidKey());
    if (key.workspace_id && (!facts.workspace || facts.workspace.status !== 'active')) {
      return fail(AuthErrors.archivedWorkspace());
    }
    const permissions = effectivePermissions({
      keyType: key.type,
      scopes: key.scopes,
      organisationRole: facts.user?.role,
      workspaceRole: facts.workspaceRole,
    });
    const organisationWide =
      key.type === 'organisation-service' ||
      (key.type === 'organisation-user' && (facts.user?.role === 'owner' || facts.user?.role === 'admin'));
    const principal: Principal = {
      organisationId: key.organisation_id,
      apiKey: {
        id: key.id,
        type: key.type,
        scopes: key.scopes,
        defaults: key.defaults,
        limits:
          (key.rate_limits?.length ?? 0) > 0 || key.usage_limits
            ? {
                id: key.id,
                name: key.name,
                rateLimits: key.rate_limits,
                usageLimits: key.usage_limits,
                alertEmails: key.alert_emails,
              }
            : null,
      },
      workspaceLimits:
        facts.workspace && (facts.workspace.usageLimits.length > 0 || facts.workspace.rateLimits.length > 0)
          ? {
              id: facts.workspace.id,
              name: facts.workspace.name,
              rateLimits: facts.workspace.rateLimits,
              usageLimits: facts.workspace.usageLimits,
              alertEmails: null,
            }
          : null,
      user: facts.user ?? undefined,
      workspaceId: key.workspace_id,
      workspaceRole: facts.workspaceRole,
      organisationWide,
      permissions,
    };
    const limits = [now + CACHE_TTL_MS];
    if (key.expires_at) limits.push(key.expires_at.getTime());
    if (viaPrevious && key.previous_key_expires_at) limits.push(key.previous_key_expires_at.getTime());
    return { principal, failure: null, validUntil: Math.min(...limits), apiKeyId: key.id };
  }
}
