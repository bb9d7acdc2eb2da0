import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body exactly as received, for forwarding without re-serialising. */
    rawBody?: Buffer;
  }
}

/**
 * JSON bodies are parsed once by Nest's parser with `rawBody: true` (see create-app), which keeps
 * their bytes so an OpenAI-native call forwards the original. This adds the rest: multipart
 * (audio, image edits) and any other type are kept as bytes and forwarded intact.
 */
export function registerGatewayBodyParsers(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    done(null, body);
  });
}
