import {
  buildAnthropicMessagesBody,
  createAnthropicStreamTranslator,
  transformAnthropicMessage,
} from '../anthropic';
import { ProviderRequestError } from '../shared/errors';
import type { JsonObject } from '../shared/json';
import type { RequestContext, StreamTranslator } from '../types';

/** Claude on Vertex AI speaks the Anthropic Messages API, with the version in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** The Messages body without `model` (Vertex names it in the URL) and with Vertex's version. */
export function buildVertexAnthropicBody(ctx: RequestContext): JsonObject {
  if (!ctx.body) throw new ProviderRequestError('a JSON body is required', null);
  const body = buildAnthropicMessagesBody(ctx.body, { includeModel: false });
  delete body.stream;
  // streamRawPredict still needs `stream: true` in the body to answer with SSE.
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body, ...(ctx.stream ? { stream: true } : {}) };
}

export function transformVertexAnthropicResponse(ctx: RequestContext, body: unknown): unknown {
  return transformAnthropicMessage(body, { strictOpenAiCompliance: ctx.strictOpenAiCompliance });
}

export function createVertexAnthropicStreamTranslator(ctx: RequestContext): StreamTranslator {
  return createAnthropicStreamTranslator({
    includeUsage: ctx.includeUsage,
    strictOpenAiCompliance: ctx.strictOpenAiCompliance,
  });
}
