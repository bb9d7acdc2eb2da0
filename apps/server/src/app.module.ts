import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { ApiKeysModule } from '@switchboard/api-keys';
import { AuditModule } from '@switchboard/audit';
import { AuthModule } from '@switchboard/auth';
import { CommonModule } from '@switchboard/common';
import { AppConfig, ConfigModule } from '@switchboard/config';
import { ConfigsModule } from '@switchboard/configs';
import { DatabaseModule } from '@switchboard/database';
import { GatewayModule, PassthroughModule } from '@switchboard/gateway';
import { IdentityModule } from '@switchboard/identity';
import { IntegrationsModule } from '@switchboard/integrations';
import { ObservabilityModule } from '@switchboard/observability';
import { PoliciesModule } from '@switchboard/policies';
import { SecretsModule } from '@switchboard/secrets';
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
          pinoHttp: { level: config.logLevel },
          // No per-request middleware: pino-http on every call cost the data plane a tenth of its
          // throughput. Control-plane access lines come from a Fastify hook (access-log.ts); the
          // data plane writes its own request records.
          forRoutes: [],
        }),
        ScheduleModule.forRoot(),
        CommonModule,
        DatabaseModule,
        SecretsModule,
        IdentityModule,
        ApiKeysModule,
        AuditModule,
        AuthModule,
        ObservabilityModule,
        IntegrationsModule,
        ConfigsModule,
        PoliciesModule,
        GatewayModule,
        // Last: its wildcard route must not shadow any other.
        PassthroughModule,
      ],
      controllers: [HealthController, OpenApiController],
      providers: [FirstStartService, OpenApiDocument],
    };
  }
}
