import type { Principal } from './principal';

declare module 'fastify' {
  interface FastifyRequest {
    /** `x-gateway-trace-id` as sent, or generated. Returned on every response. */
    traceId: string;
    /** Set by the authentication guard. */
    principal?: Principal;
    /** Set when authentication failed, so the audit interceptor can record why. */
    authFailure?: { code: string; apiKeyId?: string };
  }
}

export const TRACE_ID_HEADER = 'x-gateway-trace-id';
