import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { CacheSettings } from './config.types';

/**
 * The simple (exact-match) response cache. The key is a hash of the workspace, the config's
 * identity, the route and the canonical request body, plus either the request metadata and the
 * provider-selecting headers, or, when `x-gateway-cache-namespace` is sent, that namespace
 * instead. A stored stream keeps its chunks and is replayed as a stream.
 */
export type CacheStatus = 'HIT' | 'MISS' | 'REFRESH' | 'DISABLED';

export const DEFAULT_CACHE_MAX_AGE_SECONDS = 7 * 24 * 60 * 60;

export interface CachedResponse {
  kind: 'json' | 'stream';
  status: number;
  /** Response headers worth replaying (content type and the like). */
  headers: Record<string, string>;
  /** JSON answers: the bytes sent to the client. */
  body?: Buffer;
  /** Streams: the chunks as they were written to the client. */
  chunks?: Buffer[];
  storedAt: number;
}

export interface CacheStore {
  get(key: string): Promise<CachedResponse | null>;
  set(key: string, value: CachedResponse, ttlMs: number): Promise<void>;
}

export interface CacheKeyInput {
  workspaceId: string;
  /** The config's identity (id and version, or a hash of an inline config). */
  scope: string;
  route: string;
  /** The parsed JSON body, or raw bytes (multipart). */
  body: unknown;
  /** `x-gateway-cache-namespace`: when set, it replaces metadata and headers in the key. */
  namespace?: string | null;
  metadata?: Record<string, unknown> | null;
  /** Headers that change the answer (see cacheKeyHeaders()). */
  headers?: Record<string, string>;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value) && !(value instanceof Uint8Array)) {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value as Record<string, unknown>).sort())
      sorted[key] = canonical((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/** Headers that never take part in a cache key: per-request identifiers and the cache controls. */
const VOLATILE_HEADERS = new Set([
  'x-gateway-api-key',
  'x-gateway-trace-id',
  'x-gateway-span-id',
  'x-gateway-parent-span-id',
  'x-gateway-span-name',
  'x-gateway-metadata',
  'x-gateway-cache-namespace',
  'x-gateway-cache-force-refresh',
]);

/**
 * The request headers that select or shape the answer: every `x-gateway-*` header except
 * per-request ids and cache controls, the `anthropic-*` and `openai-*` headers, and the
 * provider key (hashed, never stored).
 */
export function cacheKeyHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const lower = name.toLowerCase();
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (lower === 'authorization') picked[lower] = createHash('sha256').update(value).digest('hex');
    else if (
      (lower.startsWith('x-gateway-') || lower.startsWith('anthropic-') || lower.startsWith('openai-')) &&
      !VOLATILE_HEADERS.has(lower)
    )
      picked[lower] = value;
  }
  return picked;
}

export function cacheKey(input: CacheKeyInput): string {
  const hash = createHash('sha256');
  hash
    .update('v1\n')
    .update(input.workspaceId)
    .update('\n')
    .update(input.scope)
    .update('\n')
    .update(input.route);
  hash.update('\n');
  if (Buffer.isBuffer(input.body) || input.body instanceof Uint8Array) hash.update(input.body);
  else hash.update(JSON.stringify(canonical(input.body ?? null)));
  hash.update('\n');
  if (input.namespace) hash.update(`namespace:${input.namespace}`);
  else
    hash.update(
      JSON.stringify(canonical({ metadata: input.metadata ?? null, headers: input.headers ?? {} })),
    );
  return hash.digest('hex');
}

function sizeOf(value: CachedResponse): number {
  let size = 256;
  if (value.body) size += value.body.length;
  if (value.chunks) for (const chunk of value.chunks) size += chunk.length + 16;
  return size;
}

export class MemoryCacheStore implements CacheStore {
  private readonly entries: LRUCache<string, { value: CachedResponse; expiresAt: number }>;
  private readonly now: () => number;

  constructor(options: { maxBytes?: number; maxEntries?: number; now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    this.entries = new LRUCache<string, { value: CachedResponse; expiresAt: number }>({
      max: options.maxEntries ?? 10_000,
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (entry) => sizeOf(entry.value),
    });
  }

  async get(key: string): Promise<CachedResponse | null> {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return null;
    }
    return entry.value;
  }

  async set(key: string, value: CachedResponse, ttlMs: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }
}

interface Encoded {
  k: 'json' | 'stream';
  s: number;
  h: Record<string, string>;
  b?: string;
  c?: string[];
  t: number;
}

export class RedisCacheStore implements CacheStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'switchboard:cache:',
  ) {}

  async get(key: string): Promise<CachedResponse | null> {
    const text = await this.redis.get(this.prefix + key);
    if (!text) return null;
    const value = JSON.parse(text) as Encoded;
    return {
      kind: value.k,
      status: value.s,
      headers: value.h,
      body: value.b !== undefined ? Buffer.from(value.b, 'base64') : undefined,
      chunks: value.c?.map((chunk) => Buffer.from(chunk, 'base64')),
      storedAt: value.t,
    };
  }

  async set(key: string, value: CachedResponse, ttlMs: number): Promise<void> {
    const encoded: Encoded = {
      k: value.kind,
      s: value.status,
      h: value.headers,
      b: value.body?.toString('base64'),
      c: value.chunks?.map((chunk) => chunk.toString('base64')),
      t: value.storedAt,
    };
    await this.redis.set(this.prefix + key, JSON.stringify(encoded), 'PX', Math.max(1, Math.round(ttlMs)));
  }
}

export interface ResponseCacheOptions {
  /** Answers larger than this are not stored. */
  maxEntryBytes?: number;
  now?: () => number;
  /** Store problems (Redis down) land here; the request goes on as a miss. */
  onError?: (error: unknown) => void;
}

export interface CacheOpenInput extends CacheKeyInput {
  /** `x-gateway-cache-force-refresh: true`. */
  forceRefresh?: boolean;
}

/** Chunks of a stream as they pass to the client; stored only when the stream ended well. */
export class StreamRecorder {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private overflow = false;
  private done = false;

  constructor(
    private readonly session: CacheSession,
    private readonly status: number,
    private readonly headers: Record<string, string>,
    private readonly maxBytes: number,
  ) {}

  /** Call with every chunk written to the client, in order. */
  push(chunk: Buffer | string): void {
    if (this.done || this.overflow) return;
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
    this.size += buffer.length;
    if (this.size > this.maxBytes) {
      this.overflow = true;
      this.chunks.length = 0;
      return;
    }
    this.chunks.push(buffer);
  }

  /** The stream ended completely: store it. */
  async finish(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (this.overflow) return;
    await this.session.store({
      kind: 'stream',
      status: this.status,
      headers: this.headers,
      chunks: this.chunks,
    });
  }

  /** The stream failed or the client left: store nothing. */
  abandon(): void {
    this.done = true;
    this.chunks.length = 0;
  }
}

/** One request's view of the cache: its key and status, the lookup and the store. */
export class CacheSession {
  status: CacheStatus;

  constructor(
    private readonly cache: ResponseCache,
    readonly key: string | null,
    private readonly ttlMs: number,
    forceRefresh: boolean,
  ) {
    this.status = key === null ? 'DISABLED' : forceRefresh ? 'REFRESH' : 'MISS';
  }

  get enabled(): boolean {
    return this.key !== null;
  }

  /** The stored answer (status becomes HIT), or null. REFRESH and DISABLED never read. */
  async lookup(): Promise<CachedResponse | null> {
    if (this.key === null || this.status === 'REFRESH') return null;
    const found = await this.cache.read(this.key);
    if (found) this.status = 'HIT';
    return found;
  }

  /** Stores a complete JSON (or other non-stream) answer; only 2xx answers are kept. */
  async storeJson(status: number, headers: Record<string, string>, body: Buffer | string): Promise<void> {
    await this.store({
      kind: 'json',
      status,
      headers,
      body: typeof body === 'string' ? Buffer.from(body) : body,
    });
  }

  /** A recorder for a streamed answer; call push() per chunk, then finish() or abandon(). */
  recordStream(status: number, headers: Record<string, string>): StreamRecorder {
    return new StreamRecorder(this, status, headers, this.cache.maxEntryBytes);
  }

  /** @internal */
  async store(value: Omit<CachedResponse, 'storedAt'>): Promise<void> {
    if (this.key === null || value.status < 200 || value.status >= 300) return;
    await this.cache.write(this.key, value, this.ttlMs);
  }
}

export class ResponseCache {
  readonly maxEntryBytes: number;
  private readonly now: () => number;

  constructor(
    private readonly store: CacheStore,
    private readonly options: ResponseCacheOptions = {},
  ) {
    this.maxEntryBytes = options.maxEntryBytes ?? 8 * 1024 * 1024;
    this.now = options.now ?? Date.now;
  }

  /** A session for one request; DISABLED when the config has no `cache`. */
  open(settings: CacheSettings | null | undefined, input: CacheOpenInput): CacheSession {
    if (!settings || settings.mode !== 'simple') return new CacheSession(this, null, 0, false);
    const ttlMs = (settings.max_age ?? DEFAULT_CACHE_MAX_AGE_SECONDS) * 1000;
    return new CacheSession(this, cacheKey(input), ttlMs, input.forceRefresh === true);
  }

  /** @internal */
  async read(key: string): Promise<CachedResponse | null> {
    try {
      return await this.store.get(key);
    } catch (error) {
      this.options.onError?.(error);
      return null;
    }
  }

  /** @internal */
  async write(key: string, value: Omit<CachedResponse, 'storedAt'>, ttlMs: number): Promise<void> {
    const entry: CachedResponse = { ...value, storedAt: this.now() };
    if (sizeOf(entry) > this.maxEntryBytes) return;
    try {
      await this.store.set(key, entry, ttlMs);
    } catch (error) {
      this.options.onError?.(error);
    }
  }
}

/** The chunks of a cached stream, in order. */
export async function* replayChunks(entry: CachedResponse): AsyncGenerator<Buffer> {
  if (entry.kind === 'stream') {
    for (const chunk of entry.chunks ?? []) yield chunk;
  } else if (entry.body) {
    yield entry.body;
  }
}

/** A cached answer as a readable stream (e.g. for `reply.send(stream)`). */
export function replayStream(entry: CachedResponse): Readable {
  return Readable.from(replayChunks(entry), { objectMode: false });
}

/** `x-gateway-cache-force-refresh` is a boolean header: `true` (any case) turns it on. */
export function isForceRefresh(value: string | string[] | undefined): boolean {
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && text.trim().toLowerCase() === 'true';
}
