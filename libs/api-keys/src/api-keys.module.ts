import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentityModule } from '@switchboard/identity';
import { ApiKeyEntity } from './entities/api-key.entity';
import { ApiKeyExpiryJob } from './api-key-expiry.job';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity]), IdentityModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeyExpiryJob],
  exports: [ApiKeysService, ApiKeyExpiryJob],
})
export class ApiKeysModule {}
