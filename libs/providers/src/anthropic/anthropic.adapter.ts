import type {
  GatewayRoute,
  ProviderAdapter,
  RequestContext,
  StreamTranslator,
  UpstreamRequest,
  Usage,
} from '../types';
import { missingCredential, readProviderError, unsupportedRoute } from '../shared/errors';
import { buildUpstreamRequest, joinUrl, passthroughBody, resolveBaseUrl } from '../shared/http';
import { asArray, asRecord, asString, isRecord, JsonObject } from '../shared/json';
import { extractOpenAiUsage } from '../shared/usage';
import { buildAnthropicMessagesBody } from './anthropic-request.translate';
import { anthropicUsage, transformAnthropicMessage } from './anthropic-response.translate';
import { createAnthropicStreamTranslator, createAnthropicUsageScanner } from './anthropic-stream.translate';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const ANTHROPIC_DEFAULT_VERSION = '2023-06-01';

const ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>([
  'chat.completions',
  'messages',
  'models.list',
  'models.retrieve',
]);

function headerFrom(ctx: RequestContext, name: string): string | undefined {
  const forwarded = ctx.forwardHeaders;
  if (!forwarded) return undefined;
  for (const key of Object.keys(forwarded)) if (key.toLowerCase() === name) return forwarded[key];
  return undefined;
}

function anthropicHeaders(ctx: RequestContext): Record<string, string> {
  const apiKey = ctx.credentials.apiKey;
  if (!apiKey) throw missingCredential('Anthropic needs an API key', 'x-api-key');
  const headers: Record<string, string> = {
    'x-api-key': apiKey,
    'anthropic-version':
      ctx.credentials.anthropicVersion ?? headerFrom(ctx, 'anthropic-version') ?? ANTHROPIC_DEFAULT_VERSION,
  };
  const beta = ctx.credentials.anthropicBeta ?? headerFrom(ctx, 'anthropic-beta');
  if (beta) headers['anthropic-beta'] = beta;
  return headers;
}

/** Anthropic's model object in the OpenAI shape (`created` in Unix seconds). */
function toOpenAiModel(value: unknown): JsonObject {
  const model = asRecord(value) ?? {};
  const createdAt = asString(model.created_at);
  const created = createdAt ? Math.floor(Date.parse(createdAt) / 1000) : 0;
  return {
    id: asString(model.id) ?? '',
    object: 'model',
    created: Number.isFinite(created) ? created : 0,
    owned_by: 'anthropic',
  };
}

/**
 * Anthropic. `chat.completions` is translated to and from the Messages API. `messages` is
 * Anthropic's own route: the body goes upstream as sent and the answer comes back untouched
 * (isNativePassthrough), with usage read from Anthropic's counters.
 */
export const anthropicAdapter: ProviderAdapter = {
  id: 'anthropic',
  displayName: 'Anthropic',
  routes: ROUTES,

  isOpenAiNative(): boolean {
    return false;
  },

  isNativePassthrough(route: GatewayRoute): boolean {
    return route === 'messages';
  },

  buildRequest(ctx: RequestContext): UpstreamRequest {
    if (!ROUTES.has(ctx.route)) throw unsupportedRoute('Anthropic', ctx.route);
    const base = resolveBaseUrl(ctx.credentials, ANTHROPIC_BASE_URL);
    const headers = anthropicHeaders(ctx);
    switch (ctx.route) {
      case 'chat.completions': {
        const body = JSON.stringify(buildAnthropicMessagesBody(ctx.body ?? {}));
        return buildUpstreamRequest(
          ctx,
          'POST',
          joinUrl(base, '/messages'),
          headers,
          body,
          'application/json',
        );
      }
      case 'messages': {
        const { body, contentType } = passthroughBody(ctx);
        return buildUpstreamRequest(ctx, 'POST', joinUrl(base, '/messages'), headers, body, contentType);
      }
      default:
        return buildUpstreamRequest(
          ctx,
          'GET',
          joinUrl(base, ctx.route === 'models.list' ? '/models' : ctx.path),
          headers,
        );
    }
  },

  transformResponse(ctx: RequestContext, body: unknown): unknown {
    switch (ctx.route) {
      case 'chat.completions':
        return transformAnthropicMessage(body, { strictOpenAiCompliance: ctx.strictOpenAiCompliance });
      case 'models.list':
        return { object: 'list', data: (asArray(asRecord(body)?.data) ?? []).map(toOpenAiModel) };
      case 'models.retrieve':
        return toOpenAiModel(body);
      default:
        return body;
    }
  },

  createStreamTranslator(ctx: RequestContext): StreamTranslator {
    if (ctx.route === 'messages') return createAnthropicUsageScanner();
    return createAnthropicStreamTranslator({
      includeUsage: ctx.includeUsage,
      strictOpenAiCompliance: ctx.strictOpenAiCompliance,
    });
  },

  transformError: readProviderError,

  extractUsage(route: GatewayRoute, body: unknown): Usage | undefined {
    if (route === 'messages') return isRecord(body) ? anthropicUsage(body.usage) : undefined;
    return extractOpenAiUsage(body);
  },
};
