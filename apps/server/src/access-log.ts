import type { FastifyInstance } from 'fastify';
import { PinoLogger } from 'nestjs-pino';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A data-plane route: it writes its own request log record and gets no access line. */
    dataPlane?: boolean;
  }
}

/**
 * One access line per control-plane request, written when the answer is sent. Cheaper than
 * pino-http on every request: no child logger, no listeners, no serialisers, and nothing at all
 * on data-plane routes (their records go to `/v1/logs`) or health probes.
 */
export function registerAccessLog(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const logger = PinoLogger.root;
    if (
      logger === undefined ||
      request.routeOptions.config?.dataPlane === true ||
      request.url.startsWith('/v1/health')
    ) {
      return done();
    }
    const status = reply.statusCode;
    const level = status >= 500 ? 'error' : 'info';
    if (logger.isLevelEnabled(level)) {
      // Flat fields, not `req`/`res`: pino-http's serializers would read those as Node objects,
      // headers (and so keys) included.
      logger[level](
        {
          reqId: request.id,
          method: request.method,
          url: request.url,
          statusCode: status,
          traceId: request.traceId,
          responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
        },
        'request completed',
      );
    }
    done();
  });
}
