import type {
  GatewayRoute,
  ProviderAdapter,
  RequestContext,
  StreamTranslator,
  UpstreamRequest,
  Usage,
} from '../types';
import { missingCredential, readProviderError, unsupportedRoute } from '../shared/errors';
import { buildUpstreamRequest, joinUrl, resolveBaseUrl } from '../shared/http';
import { asArray, asRecord, asString, JsonObject } from '../shared/json';
import { extractOpenAiUsage } from '../shared/usage';
import {
  buildCohereChatBody,
  buildCohereEmbedBody,
  buildCohereRerankBody,
  transformCohereChat,
  transformCohereEmbed,
  transformCohereRerank,
} from './cohere.translate';
import { createCohereStreamTranslator } from './cohere-stream.translate';

export const COHERE_BASE_URL = 'https://api.cohere.com';

const ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>([
  'chat.completions',
  'embeddings',
  'rerank',
  'models.list',
]);

const PATHS: Partial<Record<GatewayRoute, string>> = {
  'chat.completions': '/v2/chat',
  embeddings: '/v2/embed',
  rerank: '/v2/rerank',
  'models.list': '/v1/models',
};

function requestBody(ctx: RequestContext): JsonObject {
  const body = ctx.body ?? {};
  if (ctx.route === 'chat.completions') return buildCohereChatBody(body);
  if (ctx.route === 'embeddings') return buildCohereEmbedBody(body);
  return buildCohereRerankBody(body);
}

/** Cohere's model list (`{models: [{name}]}`) in the OpenAI shape. */
function toOpenAiModels(body: unknown): JsonObject {
  const data = (asArray(asRecord(body)?.models) ?? []).map((item) => ({
    id: asString(asRecord(item)?.name) ?? '',
    object: 'model',
    created: 0,
    owned_by: 'cohere',
  }));
  return { object: 'list', data };
}

export const cohereAdapter: ProviderAdapter = {
  id: 'cohere',
  displayName: 'Cohere',
  routes: ROUTES,

  isOpenAiNative(): boolean {
    return false;
  },

  buildRequest(ctx: RequestContext): UpstreamRequest {
    if (!ROUTES.has(ctx.route)) throw unsupportedRoute('Cohere', ctx.route);
    const apiKey = ctx.credentials.apiKey;
    if (!apiKey) throw missingCredential('Cohere needs an API key', 'authorization');
    const url = joinUrl(resolveBaseUrl(ctx.credentials, COHERE_BASE_URL), PATHS[ctx.route] ?? '');
    const headers = { authorization: `Bearer ${apiKey}` };
    if (ctx.route === 'models.list') return buildUpstreamRequest(ctx, 'GET', url, headers);
    return buildUpstreamRequest(
      ctx,
      'POST',
      url,
      headers,
      JSON.stringify(requestBody(ctx)),
      'application/json',
    );
  },

  transformResponse(ctx: RequestContext, body: unknown): unknown {
    switch (ctx.route) {
      case 'chat.completions':
        return transformCohereChat(body, ctx);
      case 'embeddings':
        return transformCohereEmbed(body, ctx);
      case 'rerank':
        return transformCohereRerank(body, ctx);
      case 'models.list':
        return toOpenAiModels(body);
      default:
        return body;
    }
  },

  createStreamTranslator(ctx: RequestContext): StreamTranslator {
    return createCohereStreamTranslator({
      model: asString(ctx.body?.model) ?? '',
      includeUsage: ctx.includeUsage,
      strictOpenAiCompliance: ctx.strictOpenAiCompliance,
    });
  },

  transformError: readProviderError,

  extractUsage(_route: GatewayRoute, body: unknown): Usage | undefined {
    return extractOpenAiUsage(body);
  },
};
