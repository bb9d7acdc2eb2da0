import { buildUpstreamRequest, resolveBaseUrl } from '../shared/http';
import { asString, type JsonObject } from '../shared/json';
import { extractOpenAiUsage } from '../shared/usage';
import type {
  GatewayRoute,
  ProviderAdapter,
  RequestContext,
  StreamTranslator,
  UpstreamRequest,
} from '../types';
import { missingCredential, ProviderRequestError } from '../shared/errors';
import { transformBedrockError } from './bedrock-error.translate';
import { buildConverseBody } from './converse-request.translate';
import { transformConverseResponse } from './converse-response.translate';
import { ConverseStreamTranslator } from './converse-stream.translator';
import {
  buildInvokeEmbeddingBody,
  embeddingFamily,
  transformInvokeEmbeddingResponse,
} from './invoke-embeddings.translate';
import { signAwsRequest, type AwsCredentials } from './sigv4.signer';

const DEFAULT_REGION = 'us-east-1';
const EVENT_STREAM = 'application/vnd.amazon.eventstream';

function requireModel(ctx: RequestContext): string {
  const model = asString(ctx.body?.model);
  if (!model) throw new ProviderRequestError('model is required', 'model');
  return model;
}

function requireCredentials(ctx: RequestContext): AwsCredentials {
  const { awsAccessKeyId, awsSecretAccessKey, awsSessionToken } = ctx.credentials;
  if (!awsAccessKeyId || !awsSecretAccessKey)
    throw missingCredential('AWS Bedrock needs an access key id and secret');
  return awsSessionToken
    ? { accessKeyId: awsAccessKeyId, secretAccessKey: awsSecretAccessKey, sessionToken: awsSessionToken }
    : { accessKeyId: awsAccessKeyId, secretAccessKey: awsSecretAccessKey };
}

interface Operation {
  action: string;
  accept: string;
  payload: JsonObject;
}

function operation(ctx: RequestContext, body: JsonObject, model: string): Operation {
  if (ctx.route === 'embeddings') {
    return {
      action: 'invoke',
      accept: 'application/json',
      payload: buildInvokeEmbeddingBody(body, embeddingFamily(model)),
    };
  }
  return {
    action: ctx.stream ? 'converse-stream' : 'converse',
    accept: ctx.stream ? EVENT_STREAM : 'application/json',
    payload: buildConverseBody(body, ctx.strictOpenAiCompliance),
  };
}

/**
 * `signingDate` exists for tests; the gateway always signs with the current time, and SigV4
 * signatures expire after five minutes, so a request must be built right before it is sent.
 */
export async function buildBedrockRequest(ctx: RequestContext, signingDate?: Date): Promise<UpstreamRequest> {
  const credentials = requireCredentials(ctx);
  if (!ctx.body) throw new ProviderRequestError('a JSON body is required', null);
  const model = requireModel(ctx);
  const region = ctx.credentials.awsRegion || DEFAULT_REGION;
  const { action, accept, payload } = operation(ctx, ctx.body, model);
  const base = resolveBaseUrl(ctx.credentials, `https://bedrock-runtime.${region}.amazonaws.com`);
  // ARNs and inference profile ids hold `:` and `/`, which must not read as path separators.
  const url = `${base}/model/${encodeURIComponent(model)}/${action}`;
  const body = JSON.stringify(payload);
  const signed = await signAwsRequest({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', accept },
    body,
    region,
    service: 'bedrock',
    credentials,
    signingDate,
  });
  // The HTTP client derives Host from the URL (the same value that was signed); sending it
  // explicitly is rejected by fetch-style clients.
  const { host: _host, ...headers } = signed;
  return buildUpstreamRequest(ctx, 'POST', url, headers, body);
}

export const bedrockAdapter: ProviderAdapter = {
  id: 'bedrock',
  displayName: 'AWS Bedrock',
  routes: new Set<GatewayRoute>(['chat.completions', 'embeddings']),
  isOpenAiNative: () => false,
  buildRequest: (ctx) => buildBedrockRequest(ctx),
  transformResponse(ctx: RequestContext, body: unknown): unknown {
    const model = requireModel(ctx);
    if (ctx.route === 'embeddings') {
      return transformInvokeEmbeddingResponse(
        body,
        embeddingFamily(model),
        model,
        asString(ctx.body?.encoding_format),
      );
    }
    return transformConverseResponse(body, model, ctx.strictOpenAiCompliance);
  },
  createStreamTranslator(ctx: RequestContext): StreamTranslator {
    return new ConverseStreamTranslator(requireModel(ctx), ctx.strictOpenAiCompliance, ctx.includeUsage);
  },
  transformError: transformBedrockError,
  extractUsage: (_route, body) => extractOpenAiUsage(body),
};
