import type { FastifyInstance } from 'fastify';

/** How often, while the server closes, connections that went idle are closed. */
const SWEEP_MS = 100;

/**
 * At close, Node's server waits for every connection, and Fastify closes only those idle at that
 * moment: a keep-alive connection whose answer (a stream, say) was still running stayed open
 * until its client's own idle timeout, seconds or minutes later, holding the shutdown. While the
 * server closes, idle connections are closed again every SWEEP_MS, so each one goes as soon as
 * its answer is done; answers in flight are never cut.
 */
export function closeConnectionsOnceIdle(fastify: FastifyInstance): void {
  let sweep: NodeJS.Timeout | null = null;
  fastify.addHook('preClose', (done) => {
    const server = fastify.server;
    sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
    sweep.unref();
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    if (sweep) clearInterval(sweep);
    sweep = null;
    done();
  });
}
