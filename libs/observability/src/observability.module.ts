import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { IdentityModule } from '@switchboard/identity';
import { RequestLogRollupEntity } from './entities/request-log-rollup.entity';
import { RequestLogEntity } from './entities/request-log.entity';
import { DEFAULT_LOG_WRITER_OPTIONS, LOG_WRITER_OPTIONS, LogWriter, LogWriterOptions } from './log-writer';
import { LogsController } from './logs.controller';
import { LogsService } from './logs.service';
import { RequestLogRepository } from './request-log.repository';

@Module({
  imports: [TypeOrmModule.forFeature([RequestLogEntity, RequestLogRollupEntity]), IdentityModule],
  controllers: [LogsController],
  providers: [
    {
      provide: LOG_WRITER_OPTIONS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): LogWriterOptions => ({
        ...DEFAULT_LOG_WRITER_OPTIONS,
        spillDirectory: join(config.dataDir, 'log-spill'),
        sqliteWorker: true,
      }),
    },
    RequestLogRepository,
    LogWriter,
    LogsService,
  ],
  exports: [LogWriter],
})
export class ObservabilityModule {}
