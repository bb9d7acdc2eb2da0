import type { GatewayRoute, ProviderAdapter, RequestContext, UpstreamRequest, Usage } from '../types';
import {
  missingCredential,
  ProviderRequestError,
  readProviderError,
  unsupportedRoute,
} from '../shared/errors';
import { buildUpstreamRequest, OPENAI_ROUTE_PATHS, passthroughBody, withQuery } from '../shared/http';
import { asString } from '../shared/json';
import { extractOpenAiUsage } from '../shared/usage';
import { createOpenAiPassthroughTranslator } from '../openai-compatible/openai-passthrough.stream';

/** Latest generally available data-plane version when the caller names none. */
export const AZURE_OPENAI_DEFAULT_API_VERSION = '2024-10-21';

/** Routes served under `/openai/deployments/{deployment}`. */
const DEPLOYMENT_ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>([
  'chat.completions',
  'completions',
  'embeddings',
  'images.generations',
  'images.edits',
  'audio.speech',
  'audio.transcriptions',
  'audio.translations',
]);

/**
 * Routes served at the resource level under `/openai` (models, files, batches, fine-tuning,
 * assistants, responses). The Responses API needs a preview `azureApiVersion`.
 */
const RESOURCE_ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>([
  'models.list',
  'models.retrieve',
  'responses',
  'openai.proxy',
]);

function resourceBase(ctx: RequestContext): string {
  const { customHost, azureResourceName } = ctx.credentials;
  if (customHost) return customHost.replace(/\/+$/, '');
  if (!azureResourceName) {
    throw new ProviderRequestError(
      'Azure OpenAI needs the resource name (or a custom host)',
      'azure_resource_name',
    );
  }
  return `https://${azureResourceName}.openai.azure.com`;
}

function routePath(ctx: RequestContext): string {
  if (DEPLOYMENT_ROUTES.has(ctx.route)) {
    // A deployment is usually named after its model, so the body's model is a fair fallback.
    const deployment = ctx.credentials.azureDeploymentId ?? asString(ctx.body?.model);
    if (!deployment) {
      throw new ProviderRequestError('Azure OpenAI needs a deployment id', 'azure_deployment_id');
    }
    const path = OPENAI_ROUTE_PATHS[ctx.route as Exclude<GatewayRoute, 'openai.proxy'>];
    return `/openai/deployments/${encodeURIComponent(deployment)}${path}`;
  }
  if (ctx.route === 'models.list') return '/openai/models';
  return `/openai${ctx.path}`;
}

const AZURE_ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>([
  ...DEPLOYMENT_ROUTES,
  ...RESOURCE_ROUTES,
]);

export const azureOpenAiAdapter: ProviderAdapter = {
  id: 'azure-openai',
  displayName: 'Azure OpenAI',
  routes: AZURE_ROUTES,

  isOpenAiNative(route: GatewayRoute): boolean {
    return AZURE_ROUTES.has(route);
  },

  buildRequest(ctx: RequestContext): UpstreamRequest {
    if (!AZURE_ROUTES.has(ctx.route)) throw unsupportedRoute('Azure OpenAI', ctx.route);
    const { azureEntraToken, apiKey, azureApiVersion } = ctx.credentials;
    let headers: Record<string, string>;
    if (azureEntraToken) headers = { authorization: `Bearer ${azureEntraToken}` };
    else if (apiKey) headers = { 'api-key': apiKey };
    else throw missingCredential('Azure OpenAI needs an API key or an Entra ID token', 'api_key');

    const url = withQuery(resourceBase(ctx) + routePath(ctx), {
      'api-version': azureApiVersion ?? AZURE_OPENAI_DEFAULT_API_VERSION,
    });
    const { body, contentType } = passthroughBody(ctx);
    return buildUpstreamRequest(ctx, ctx.method, url, headers, body, contentType);
  },

  transformResponse(_ctx: RequestContext, body: unknown): unknown {
    return body;
  },

  createStreamTranslator: () => createOpenAiPassthroughTranslator(),

  transformError: readProviderError,

  extractUsage(_route: GatewayRoute, body: unknown): Usage | undefined {
    return extractOpenAiUsage(body);
  },
};
