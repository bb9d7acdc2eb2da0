import { Module } from '@nestjs/common';
import { AuthModule } from '@switchboard/auth';
import { ConfigsModule } from '@switchboard/configs';
import { IntegrationsModule } from '@switchboard/integrations';
import { LOG_SINK, LogWriter, ObservabilityModule } from '@switchboard/observability';
import { PoliciesModule } from '@switchboard/policies';
import { GatewayController, PassthroughController } from './gateway.controller';
import { GatewayService } from './gateway.service';
import { RealtimeProxy } from './realtime/realtime.proxy';

/**
 * The data plane: HTTP routes, and the realtime WebSocket proxy on the server's upgrade event.
 * Its records go to the observability module's batched writer.
 */
@Module({
  imports: [ObservabilityModule, AuthModule, IntegrationsModule, ConfigsModule, PoliciesModule],
  controllers: [GatewayController],
  providers: [GatewayService, RealtimeProxy, { provide: LOG_SINK, useExisting: LogWriter }],
  exports: [GatewayService],
})
export class GatewayModule {}

/** Separate so the app can import it last: its wildcard must come after every real route. */
@Module({
  imports: [GatewayModule],
  controllers: [PassthroughController],
})
export class PassthroughModule {}
