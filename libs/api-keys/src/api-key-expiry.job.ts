import { Inject, Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { LockService } from '@switchboard/database';
import { ApiKeysService } from './api-keys.service';

/** Marks expired keys once per minute, on one replica per tick. Authentication checks expiry anyway. */
@Injectable()
export class ApiKeyExpiryJob {
  private readonly logger = new Logger(ApiKeyExpiryJob.name);

  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly locks: LockService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'api-key-expiry' })
  async tick(): Promise<void> {
    if (!this.config.jobsEnabled) return;
    await this.run();
  }

  async run(): Promise<number> {
    let marked = 0;
    await this.locks.tryRun('job:api-key-expiry', async () => {
      marked = await this.apiKeys.markExpired();
    });
    if (marked > 0) this.logger.log(`Marked ${marked} API key(s) expired`);
    return marked;
  }
}
