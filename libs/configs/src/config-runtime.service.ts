import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { redisClient } from '@switchboard/common';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { BreakerStore, MemoryBreakerStore, RedisBreakerStore } from './circuit-breaker';
import type { RequestConfig } from './config-store';
import {
  CacheOpenInput,
  CacheSession,
  MemoryCacheStore,
  RedisCacheStore,
  ResponseCache,
} from './response-cache';
import { AttemptFn, RoutingRequest, RoutingResult, executeConfig } from './routing-engine';

export const BREAKER_KEY_PREFIX = 'switchboard:cb:';
export const CACHE_KEY_PREFIX = 'switchboard:cache:';

/**
 * The data plane's side of configs: runs the routing engine with the circuit breakers, and opens
 * response-cache sessions. State lives in this process, or in Redis when REDIS_URL is set so every
 * replica shares breakers and cached answers. A Redis problem never fails a request: breakers
 * read as closed and the cache as a miss.
 */
@Injectable()
export class ConfigRuntime implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ConfigRuntime.name);
  private readonly redis: Redis | null;
  readonly breakers: BreakerStore;
  readonly cache: ResponseCache;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const onError = (error: unknown) =>
      this.logger.warn(`Routing state: ${error instanceof Error ? error.message : String(error)}`);
    if (config.redisUrl) {
      this.redis = new (redisClient())(config.redisUrl, {
        lazyConnect: true,
        maxRetriesPerRequest: 1,
        // A slow Redis must not hold a request for long: the call degrades instead.
        commandTimeout: 500,
      });
      this.redis.on('error', onError);
      this.breakers = new RedisBreakerStore(this.redis, BREAKER_KEY_PREFIX);
      this.cache = new ResponseCache(new RedisCacheStore(this.redis, CACHE_KEY_PREFIX), { onError });
    } else {
      this.redis = null;
      this.breakers = new MemoryBreakerStore();
      this.cache = new ResponseCache(new MemoryCacheStore(), { onError });
    }
  }

  async onModuleInit(): Promise<void> {
    await this.redis?.connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }

  /** Runs the request's config; `attempt` makes one provider call (see executeConfig). */
  run<R>(
    requestConfig: RequestConfig,
    request: Omit<RoutingRequest, 'scope'>,
    attempt: AttemptFn<R>,
  ): Promise<RoutingResult<R>> {
    return executeConfig(requestConfig.config, { ...request, scope: requestConfig.scope }, attempt, {
      breakers: this.breakers,
      onError: (error) =>
        this.logger.warn(`Circuit breaker state: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  /** A cache session for the request: DISABLED unless its config has `cache`. */
  openCache(requestConfig: RequestConfig | null, input: Omit<CacheOpenInput, 'scope'>): CacheSession {
    return this.cache.open(requestConfig?.cache ?? null, { ...input, scope: requestConfig?.scope ?? 'none' });
  }
}
