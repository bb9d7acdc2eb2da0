import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentityModule } from '@switchboard/identity';
import { ConfigRuntime } from './config-runtime.service';
import { ConfigStore } from './config-store';
import { ConfigsController } from './configs.controller';
import { ConfigsService } from './configs.service';
import { ConfigVersionEntity } from './entities/config-version.entity';
import { ConfigEntity } from './entities/config.entity';

/** Gateway configs: storage, versions, validation, routing strategies, circuit breakers, cache. */
@Module({
  imports: [TypeOrmModule.forFeature([ConfigEntity, ConfigVersionEntity]), IdentityModule],
  controllers: [ConfigsController],
  providers: [ConfigsService, ConfigStore, ConfigRuntime],
  exports: [ConfigsService, ConfigStore, ConfigRuntime],
})
export class ConfigsModule {}
