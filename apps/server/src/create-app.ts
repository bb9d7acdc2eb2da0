import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import {
  ErrorEnvelopeFilter,
  TRACE_ID_HEADER,
  createValidationPipe,
  timeOrderedId,
} from '@switchboard/common';
import { AppConfig } from '@switchboard/config';
import { registerGatewayBodyParsers } from '@switchboard/gateway';
import { registerAccessLog } from './access-log';
import { closeConnectionsOnceIdle } from './drain-on-close';
import { AppModule } from './app.module';
import { OpenApiDocument } from './openapi.controller';

/** Largest request body accepted (multipart audio and images included). */
const BODY_LIMIT_BYTES = 50 * 1024 * 1024;
const MAX_TRACE_ID_LENGTH = 128;

/** Builds the initialised application without listening: main.ts listens, tests inject. */
export async function createApp(
  config: AppConfig,
  options: { bufferLogs?: boolean } = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => timeOrderedId(),
    trustProxy: process.env.GATEWAY_TRUST_PROXY === 'true',
  });
  const fastify = adapter.getInstance();
  registerGatewayBodyParsers(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    const sent = request.headers[TRACE_ID_HEADER];
    request.traceId =
      typeof sent === 'string' && sent.length > 0 && sent.length <= MAX_TRACE_ID_LENGTH ? sent : request.id;
    reply.header(TRACE_ID_HEADER, request.traceId);
    done();
  });
  registerAccessLog(fastify);
  closeConnectionsOnceIdle(fastify);

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    bufferLogs: options.bufferLogs ?? true,
    rawBody: true,
  });
  app.useLogger(app.get(Logger));
  app.setGlobalPrefix('v1');
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  app.enableShutdownHooks();

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Switchboard')
      .setDescription('Self-hosted AI gateway: data plane and administration API')
      .setVersion('1')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'x-gateway-api-key' }, 'x-gateway-api-key')
      .addSecurityRequirements('x-gateway-api-key')
      .build(),
  );
  app.get(OpenApiDocument).document = document;
  await app.init();
  return app;
}
