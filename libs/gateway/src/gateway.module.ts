import { Module } from '@nestjs/common';
import { LOG_SINK, LogWriter, ObservabilityModule } from '@switchboard/observability';
import { GatewayController, PassthroughController } from './gateway.controller';
import { GatewayService } from './gateway.service';

/** The data plane: its records go to the observability module's batched writer. */
@Module({
  imports: [ObservabilityModule],
  controllers: [GatewayController],
  providers: [GatewayService, { provide: LOG_SINK, useExisting: LogWriter }],
  exports: [GatewayService],
})
export class GatewayModule {}

/** Separate so the app can import it last: its wildcard must come after every real route. */
@Module({
  imports: [GatewayModule],
  controllers: [PassthroughController],
})
export class PassthroughModule {}
