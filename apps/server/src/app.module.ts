import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { ApiKeysModule } from '@switchboard/api-keys';
import { AuditModule } from '@switchboard/audit';
import { AuthModule } from '@switchboard/auth';
import { CommonModule } from '@switchboard/common';
import { AppConfig, ConfigModule } from '@switchboard/config';
import { DatabaseModule } from '@switchboard/database';
import { GatewayModule, PassthroughModule } from '@switchboard/gateway';
import { IdentityModule } from '@switchboard/identity';
import { ObservabilityModule } from '@switchboard/observability';
import { FirstStartService } from './first-start.service';
import { HealthController } from './health.controller';
import { OpenApiController, OpenApiDocument } from './openapi.controller';

/** Composes the lib modules; nothing else. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            // The data plane writes its own request records; access logs here are for the control plane.
            autoLogging: { ignore: (request) => (request.url ?? '').startsWith('/v1/health') },
            redact: ['req.headers["x-gateway-api-key"]', 'req.headers.authorization'],
          },
        }),
        ScheduleModule.forRoot(),
        CommonModule,
        DatabaseModule,
        IdentityModule,
        ApiKeysModule,
        AuditModule,
        AuthModule,
        ObservabilityModule,
        GatewayModule,
        // Last: its wildcard route must not shadow any other.
        PassthroughModule,
      ],
      controllers: [HealthController, OpenApiController],
      providers: [FirstStartService, OpenApiDocument],
    };
  }
}
