import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError } from '@switchboard/common';
import {
  createSecretManagerClient,
  defaultSecretManagerEnvironment,
} from './managers/secret-manager.factory';
import {
  SecretManagerClient,
  SecretManagerEnvironment,
  SecretManagerError,
  SecretManagerType,
} from './managers/secret-manager.types';
import { SecretErrors } from './secrets.errors';

/** What the resolver needs of a secret reference: its id (and name, for messages) and how to read it. */
export interface SecretReferenceTarget {
  id: string;
  /** Shown in error messages beside the id. */
  name?: string | null;
  managerType: SecretManagerType;
  /** The decrypted, normalised auth config (validateSecretAuthConfig's answer). */
  authConfig: Record<string, unknown>;
  /** `secret_path` of the reference. */
  path: string;
  /** `secret_key` of the reference. */
  key?: string | null;
  version?: string | null;
}

export interface ResolveOptions {
  /** A secret mapping's `secret_key`, which overrides the reference's own key when set. */
  key?: string | null;
  /** Skip the cache and read from the manager now (the value is cached again). */
  forceRefresh?: boolean;
}

export interface SecretResolverOptions {
  /** How long a value read from a manager is served; default 5 minutes. */
  ttlMs: number;
  /** A read within this long before expiry answers the cached value and refreshes it in the background; default 20% of the TTL. */
  refreshAheadMs: number;
  /** How long a failed read is remembered, so a down manager is not called once per request; default 1 s. */
  errorTtlMs: number;
  /** Cached values (reference and key pairs) kept at most; the least recently used go first. */
  maxEntries: number;
  /** Timeout of one HTTP exchange with a manager; default 10 s. */
  requestTimeoutMs: number;
  /** Environment for ambient credentials (tests point it at mocks). */
  environment: Partial<SecretManagerEnvironment>;
  /** Builds a client; replaced in tests that count calls without HTTP. */
  clientFactory: (
    managerType: SecretManagerType,
    authConfig: Record<string, unknown>,
    environment: SecretManagerEnvironment,
  ) => SecretManagerClient;
}

export const SECRET_RESOLVER_OPTIONS = Symbol('SECRET_RESOLVER_OPTIONS');

const DEFAULTS = { ttlMs: 5 * 60 * 1000, errorTtlMs: 1000, maxEntries: 1000, requestTimeoutMs: 10_000 };

interface CacheEntry {
  id: string;
  fingerprint: string;
  reference: SecretReferenceTarget;
  key: string | null;
  value?: string;
  expiresAt: number;
  refreshAt: number;
  error?: AppError;
  errorUntil: number;
  inflight?: Promise<string>;
}

/**
 * Reads secrets from the external managers behind secret references and keeps them in memory for
 * a bounded time. A read in the last part of a value's life answers at once and refreshes it in
 * the background (stale-while-revalidate); concurrent reads of one value share one call to the
 * manager. Values are keyed by reference id and a fingerprint of its configuration, so an
 * updated reference is never answered from the old configuration's cache.
 */
@Injectable()
export class SecretResolver {
  private readonly logger = new Logger(SecretResolver.name);
  private readonly options: SecretResolverOptions;
  private readonly environment: SecretManagerEnvironment;
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly clients: LRUCache<string, SecretManagerClient>;
  /** Cache keys per reference id, so invalidate and peek do not scan the whole cache. */
  private readonly keysById = new Map<string, Set<string>>();

  constructor(@Optional() @Inject(SECRET_RESOLVER_OPTIONS) options?: Partial<SecretResolverOptions>) {
    const ttlMs = options?.ttlMs ?? DEFAULTS.ttlMs;
    this.options = {
      ttlMs,
      refreshAheadMs: Math.min(options?.refreshAheadMs ?? Math.floor(ttlMs * 0.2), ttlMs),
      errorTtlMs: options?.errorTtlMs ?? DEFAULTS.errorTtlMs,
      maxEntries: options?.maxEntries ?? DEFAULTS.maxEntries,
      requestTimeoutMs: options?.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      environment: options?.environment ?? {},
      clientFactory: options?.clientFactory ?? createSecretManagerClient,
    };
    this.environment = defaultSecretManagerEnvironment({
      requestTimeoutMs: this.options.requestTimeoutMs,
      ...this.options.environment,
    });
    this.cache = new LRUCache({
      max: this.options.maxEntries,
      dispose: (entry, cacheKey) => {
        const keys = this.keysById.get(entry.id);
        keys?.delete(cacheKey);
        if (keys?.size === 0) this.keysById.delete(entry.id);
      },
    });
    // Clients hold login tokens and temporary credentials: one per distinct auth config.
    this.clients = new LRUCache({ max: this.options.maxEntries });
  }

  /** The secret a reference points to (with a mapping's key override), from cache or the manager. */
  async resolve(reference: SecretReferenceTarget, options: ResolveOptions = {}): Promise<string> {
    const key = options.key ?? reference.key ?? null;
    const cacheKey = this.cacheKey(reference.id, key, reference.version ?? null);
    const fingerprint = fingerprintOf(reference, key);
    let entry = this.cache.get(cacheKey);
    if (entry && entry.fingerprint !== fingerprint) {
      this.cache.delete(cacheKey);
      entry = undefined;
    }
    if (entry) entry.reference = reference;
    const now = Date.now();
    if (entry && !options.forceRefresh) {
      if (entry.value !== undefined && now < entry.expiresAt) {
        if (now >= entry.refreshAt) this.refreshInBackground(entry);
        return entry.value;
      }
      if (entry.error && now < entry.errorUntil) throw entry.error;
      if (entry.inflight) return entry.inflight;
    }
    if (!entry) {
      entry = { id: reference.id, fingerprint, reference, key, expiresAt: 0, refreshAt: 0, errorUntil: 0 };
      this.cache.set(cacheKey, entry);
      const keys = this.keysById.get(reference.id) ?? new Set<string>();
      keys.add(cacheKey);
      this.keysById.set(reference.id, keys);
    }
    return this.load(entry);
  }

  /** The cached value if it is still fresh, without waiting; starts a background refresh when due. */
  peek(id: string, key?: string | null, version?: string | null): string | undefined {
    let found: CacheEntry | undefined;
    if (key !== undefined) {
      found = this.cache.get(this.cacheKey(id, key, version ?? null));
    } else {
      // Without a key: the cached value of the reference's own key.
      for (const cacheKey of this.keysById.get(id) ?? []) {
        const entry = this.cache.peek(cacheKey);
        if (
          entry &&
          entry.key === (entry.reference.key ?? null) &&
          (entry.reference.version ?? null) === (version ?? null)
        ) {
          found = this.cache.get(cacheKey);
          break;
        }
      }
    }
    if (!found || found.value === undefined || Date.now() >= found.expiresAt) return undefined;
    if (Date.now() >= found.refreshAt) this.refreshInBackground(found);
    return found.value;
  }

  /** Drops every cached value of a reference (call on update and delete). */
  invalidate(id: string): void {
    for (const cacheKey of [...(this.keysById.get(id) ?? [])]) this.cache.delete(cacheKey);
    this.keysById.delete(id);
  }

  clear(): void {
    this.cache.clear();
    this.clients.clear();
  }

  get size(): number {
    return this.cache.size;
  }

  private cacheKey(id: string, key: string | null, version: string | null): string {
    return `${id}\u0000${key ?? ''}\u0000${version ?? ''}`;
  }

  private load(entry: CacheEntry): Promise<string> {
    if (entry.inflight) return entry.inflight;
    const started = this.fetch(entry.reference, entry.key)
      .then((value) => {
        const now = Date.now();
        entry.value = value;
        entry.expiresAt = now + this.options.ttlMs;
        entry.refreshAt = entry.expiresAt - this.options.refreshAheadMs;
        entry.error = undefined;
        entry.errorUntil = 0;
        return value;
      })
      .catch((error: unknown) => {
        const appError = this.toAppError(entry.reference, error);
        entry.error = appError;
        entry.errorUntil = Date.now() + this.options.errorTtlMs;
        throw appError;
      })
      .finally(() => {
        entry.inflight = undefined;
      });
    entry.inflight = started;
    return started;
  }

  private refreshInBackground(entry: CacheEntry): void {
    if (entry.inflight) return;
    this.load(entry).catch((error: AppError) => {
      // The cached value stays until it expires; try again after a pause, not on every read.
      entry.refreshAt = Math.min(entry.expiresAt, Date.now() + Math.max(this.options.errorTtlMs, 1000));
      this.logger.warn(`Background refresh failed: ${error.message}`);
    });
  }

  private async fetch(reference: SecretReferenceTarget, key: string | null): Promise<string> {
    const client = this.client(reference);
    return client.read({ path: reference.path, key, version: reference.version ?? null });
  }

  private client(reference: SecretReferenceTarget): SecretManagerClient {
    const id = createHash('sha256')
      .update(`${reference.managerType}\u0000${stableJson(reference.authConfig)}`)
      .digest('hex');
    let client = this.clients.get(id);
    if (!client) {
      client = this.options.clientFactory(reference.managerType, reference.authConfig, this.environment);
      this.clients.set(id, client);
    }
    return client;
  }

  private toAppError(reference: SecretReferenceTarget, error: unknown): AppError {
    if (error instanceof AppError) return error;
    let target: string | null = null;
    try {
      target = this.client(reference).target;
    } catch {
      // The configuration itself is unusable; the message says why.
    }
    if (error instanceof SecretManagerError) {
      return SecretErrors.unavailable(reference, reference.managerType, target, error.message);
    }
    this.logger.error(
      `Unexpected error reading secret reference ${reference.id}: ${(error as Error)?.stack ?? String(error)}`,
    );
    return SecretErrors.unavailable(
      reference,
      reference.managerType,
      target,
      'unexpected error in the gateway',
    );
  }
}

function fingerprintOf(reference: SecretReferenceTarget, key: string | null): string {
  return createHash('sha256')
    .update(
      stableJson({
        managerType: reference.managerType,
        authConfig: reference.authConfig,
        path: reference.path,
        key,
        version: reference.version ?? null,
      }),
    )
    .digest('hex');
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
