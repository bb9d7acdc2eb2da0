import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiKeysService, generateRawKey } from '@switchboard/api-keys';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { LockService } from '@switchboard/database';
import { IdentitySetupService } from '@switchboard/identity';

/**
 * A first start with an empty database creates the organisation, its owner, a default workspace
 * and an admin key, all in one transaction under a lock, so two replicas starting together make
 * exactly one. Later starts find the organisation and create nothing.
 */
@Injectable()
export class FirstStartService implements OnApplicationBootstrap {
  private readonly logger = new Logger(FirstStartService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly locks: LockService,
    private readonly identity: IdentitySetupService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.locks.run('first-start', () =>
      this.dataSource.transaction(async (manager) => {
        if (!(await this.identity.isEmpty(manager))) return;
        const ownerEmail = process.env.GATEWAY_OWNER_EMAIL ?? 'owner@localhost';
        const created = await this.identity.createInitial(manager, ownerEmail);
        const raw = this.config.adminKey ?? generateRawKey();
        await this.apiKeys.createBootstrapKey(manager, created.organisationId, created.ownerId, raw);
        this.logger.log(`First start: created organisation ${created.organisationId} and default workspace`);
        if (!this.config.adminKey) {
          // Printed once, outside the JSON log stream, so an operator sees it in the terminal.
          process.stdout.write(
            `\n  Switchboard admin API key (shown once, store it now):\n\n    ${raw}\n\n` +
              `  Use it in the x-gateway-api-key header. Set GATEWAY_ADMIN_KEY to choose it yourself.\n\n`,
          );
        }
      }),
    );
  }
}
