import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { redisClient } from './optional-modules';

const CHANNEL = 'switchboard:invalidate';

/**
 * Tells every replica to drop an in-memory cache (keys, configs, providers, policies). Local
 * listeners run at once; with REDIS_URL the message also goes to the other replicas, which is
 * what keeps the warm path free of database reads without serving stale access.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(InvalidationBus.name);
  private readonly origin = randomUUID();
  private readonly listeners = new Map<string, (() => void)[]>();
  private publisher: Redis | null = null;
  private subscriber: Redis | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    if (!this.config.redisUrl) return;
    const Client = redisClient();
    this.publisher = new Client(this.config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.subscriber = new Client(this.config.redisUrl, { lazyConnect: true });
    this.publisher.on('error', (error) => this.logger.warn(`Redis publisher: ${error.message}`));
    this.subscriber.on('error', (error) => this.logger.warn(`Redis subscriber: ${error.message}`));
    await Promise.all([this.publisher.connect(), this.subscriber.connect()]);
    await this.subscriber.subscribe(CHANNEL);
    this.subscriber.on('message', (_channel, message) => {
      const [origin, topic] = message.split('|', 2);
      if (origin !== this.origin) this.runLocal(topic);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([
      this.publisher?.quit().catch(() => undefined),
      this.subscriber?.quit().catch(() => undefined),
    ]);
  }

  on(topic: string, listener: () => void): void {
    const list = this.listeners.get(topic) ?? [];
    list.push(listener);
    this.listeners.set(topic, list);
  }

  publish(topic: string): void {
    this.runLocal(topic);
    this.publisher?.publish(CHANNEL, `${this.origin}|${topic}`).catch((error: Error) => {
      this.logger.warn(`Could not broadcast invalidation of ${topic}: ${error.message}`);
    });
  }

  private runLocal(topic: string): void {
    for (const listener of this.listeners.get(topic) ?? []) listener();
  }
}
