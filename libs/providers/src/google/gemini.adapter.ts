import { buildUpstreamRequest, joinUrl, resolveBaseUrl } from '../shared/http';
import { asString, type JsonObject } from '../shared/json';
import { extractOpenAiUsage } from '../shared/usage';
import type {
  GatewayRoute,
  ProviderAdapter,
  RequestContext,
  StreamTranslator,
  UpstreamRequest,
} from '../types';
import { buildBatchEmbedBody, transformBatchEmbedResponse } from './embeddings.translate';
import { buildGenerateContentBody } from './gemini-request.translate';
import { transformGenerateContentResponse } from './gemini-response.translate';
import { GeminiStreamTranslator } from './gemini-stream.translator';
import { missingCredential, ProviderRequestError, readProviderError } from '../shared/errors';

const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** Model id from the body; the `models/` prefix Google's own clients use is accepted. */
export function requireModel(ctx: RequestContext): string {
  const model = asString(ctx.body?.model);
  if (!model) throw new ProviderRequestError('model is required', 'model');
  return model.replace(/^models\//, '');
}

export function requireBody(ctx: RequestContext): JsonObject {
  if (!ctx.body) throw new ProviderRequestError('a JSON body is required', null);
  return ctx.body;
}

function buildRequest(ctx: RequestContext): UpstreamRequest {
  const apiKey = ctx.credentials.apiKey;
  if (!apiKey) throw missingCredential('Google Gemini needs an API key');
  const body = requireBody(ctx);
  const model = requireModel(ctx);
  // Tuned models live beside `models/`, under their own collection.
  const modelPath = model.startsWith('tunedModels/') ? `/${model}` : `/models/${encodeURIComponent(model)}`;
  const modelUrl = joinUrl(resolveBaseUrl(ctx.credentials, GEMINI_BASE_URL), modelPath);
  const headers = { 'x-goog-api-key': apiKey };
  if (ctx.route === 'embeddings') {
    const payload = JSON.stringify(buildBatchEmbedBody(body, model));
    return buildUpstreamRequest(
      ctx,
      'POST',
      `${modelUrl}:batchEmbedContents`,
      headers,
      payload,
      'application/json',
    );
  }
  const url = ctx.stream ? `${modelUrl}:streamGenerateContent?alt=sse` : `${modelUrl}:generateContent`;
  const payload = JSON.stringify(buildGenerateContentBody(body, ctx.strictOpenAiCompliance));
  return buildUpstreamRequest(ctx, 'POST', url, headers, payload, 'application/json');
}

export const googleAdapter: ProviderAdapter = {
  id: 'google',
  displayName: 'Google Gemini',
  routes: new Set<GatewayRoute>(['chat.completions', 'embeddings']),
  isOpenAiNative: () => false,
  buildRequest,
  transformResponse(ctx: RequestContext, body: unknown): unknown {
    const model = requireModel(ctx);
    if (ctx.route === 'embeddings') {
      return transformBatchEmbedResponse(body, model, asString(ctx.body?.encoding_format));
    }
    return transformGenerateContentResponse(body, model, ctx.strictOpenAiCompliance);
  },
  createStreamTranslator(ctx: RequestContext): StreamTranslator {
    return new GeminiStreamTranslator(requireModel(ctx), ctx.strictOpenAiCompliance, ctx.includeUsage);
  },
  transformError: (status, body) => readProviderError(status, body),
  extractUsage: (_route, body) => extractOpenAiUsage(body),
};
