import { buildUpstreamRequest, resolveBaseUrl } from '../shared/http';
import { asString } from '../shared/json';
import { extractOpenAiUsage } from '../shared/usage';
import type {
  GatewayRoute,
  ProviderAdapter,
  ProviderCredentials,
  RequestContext,
  StreamTranslator,
  UpstreamRequest,
} from '../types';
import { buildVertexPredictBody, transformVertexPredictResponse } from './embeddings.translate';
import { requireBody } from './gemini.adapter';
import { buildGenerateContentBody } from './gemini-request.translate';
import { transformGenerateContentResponse } from './gemini-response.translate';
import { GeminiStreamTranslator } from './gemini-stream.translator';
import { missingCredential, ProviderRequestError, readProviderError } from '../shared/errors';
import {
  buildVertexAnthropicBody,
  createVertexAnthropicStreamTranslator,
  transformVertexAnthropicResponse,
} from './vertex-anthropic.translate';

const DEFAULT_REGION = 'us-central1';

export interface VertexModel {
  publisher: string;
  model: string;
}

/**
 * Publisher and model from the body's `model`: `publishers/{publisher}/models/{model}` when spelled
 * out, else Claude ids belong to `anthropic` and everything else to `google`.
 */
export function resolveVertexModel(model: string): VertexModel {
  const explicit = /^publishers\/([^/]+)\/models\/(.+)$/.exec(model);
  if (explicit) return { publisher: explicit[1], model: explicit[2] };
  if (model.startsWith('claude')) return { publisher: 'anthropic', model };
  return { publisher: 'google', model };
}

/** The regional endpoint; the `global` location is served from the host without a region prefix. */
export function vertexHost(credentials: ProviderCredentials): string {
  const region = credentials.vertexRegion || DEFAULT_REGION;
  const host =
    region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
  return resolveBaseUrl(credentials, host);
}

/** Vertex names model versions `model@version`; `@` is legal in a path segment and kept as is. */
function modelSegment(model: string): string {
  return encodeURIComponent(model).replace(/%40/g, '@');
}

export function vertexModelUrl(
  credentials: ProviderCredentials,
  target: VertexModel,
  method: string,
): string {
  const project = credentials.vertexProjectId;
  if (!project) throw missingCredential('Vertex AI needs a project id');
  const region = credentials.vertexRegion || DEFAULT_REGION;
  return (
    `${vertexHost(credentials)}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}` +
    `/publishers/${encodeURIComponent(target.publisher)}/models/${modelSegment(target.model)}:${method}`
  );
}

function targetOf(ctx: RequestContext): VertexModel {
  const model = asString(ctx.body?.model);
  if (!model) throw new ProviderRequestError('model is required', 'model');
  return resolveVertexModel(model);
}

function buildRequest(ctx: RequestContext): UpstreamRequest {
  const token = ctx.credentials.vertexAccessToken;
  if (!token) throw missingCredential('Vertex AI needs an access token');
  const body = requireBody(ctx);
  const target = targetOf(ctx);
  const headers = { authorization: `Bearer ${token}` };
  if (ctx.route === 'embeddings') {
    const url = vertexModelUrl(ctx.credentials, target, 'predict');
    return buildUpstreamRequest(
      ctx,
      'POST',
      url,
      headers,
      JSON.stringify(buildVertexPredictBody(body)),
      'application/json',
    );
  }
  if (target.publisher === 'anthropic') {
    const url = vertexModelUrl(ctx.credentials, target, ctx.stream ? 'streamRawPredict' : 'rawPredict');
    const payload = JSON.stringify(buildVertexAnthropicBody(ctx));
    return buildUpstreamRequest(ctx, 'POST', url, headers, payload, 'application/json');
  }
  if (target.publisher !== 'google') {
    throw new ProviderRequestError(
      `Vertex AI publisher '${target.publisher}' is not supported; use google or anthropic`,
      'model',
    );
  }
  const url = ctx.stream
    ? `${vertexModelUrl(ctx.credentials, target, 'streamGenerateContent')}?alt=sse`
    : vertexModelUrl(ctx.credentials, target, 'generateContent');
  const payload = JSON.stringify(buildGenerateContentBody(body, ctx.strictOpenAiCompliance));
  return buildUpstreamRequest(ctx, 'POST', url, headers, payload, 'application/json');
}

export const vertexAdapter: ProviderAdapter = {
  id: 'vertex-ai',
  displayName: 'Google Vertex AI',
  routes: new Set<GatewayRoute>(['chat.completions', 'embeddings']),
  isOpenAiNative: () => false,
  buildRequest,
  transformResponse(ctx: RequestContext, body: unknown): unknown {
    const target = targetOf(ctx);
    if (ctx.route === 'embeddings') {
      return transformVertexPredictResponse(body, target.model, asString(ctx.body?.encoding_format));
    }
    if (target.publisher === 'anthropic') return transformVertexAnthropicResponse(ctx, body);
    return transformGenerateContentResponse(body, target.model, ctx.strictOpenAiCompliance);
  },
  createStreamTranslator(ctx: RequestContext): StreamTranslator {
    const target = targetOf(ctx);
    if (target.publisher === 'anthropic') return createVertexAnthropicStreamTranslator(ctx);
    return new GeminiStreamTranslator(target.model, ctx.strictOpenAiCompliance, ctx.includeUsage);
  },
  transformError: (status, body) => readProviderError(status, body),
  extractUsage: (_route, body) => extractOpenAiUsage(body),
};
