import type {
  GatewayRoute,
  ProviderAdapter,
  ProviderCredentials,
  RequestContext,
  StreamTranslator,
  UpstreamRequest,
  Usage,
} from '../types';
import {
  missingCredential,
  ProviderRequestError,
  readProviderError,
  unsupportedRoute,
} from '../shared/errors';
import {
  buildUpstreamRequest,
  joinUrl,
  openAiRoutePath,
  passthroughBody,
  resolveBaseUrl,
} from '../shared/http';
import type { JsonObject } from '../shared/json';
import { createOpenAiPassthroughTranslator } from './openai-passthrough.stream';
import { extractOpenAiUsage } from '../shared/usage';

export type AuthStyle =
  /** `Authorization: Bearer <key>`. */
  | { kind: 'bearer' }
  /** The key alone in a named header (`api-key`, `x-api-key`). */
  | { kind: 'header'; name: string };

/**
 * A route the provider serves in its own shape: the adapter translates the request body and the
 * answer. Routes without a translation are OpenAI-native and forwarded untouched.
 */
export interface RouteTranslation {
  /** Path after the base URL. */
  path: string;
  request(body: JsonObject, ctx: RequestContext): JsonObject;
  response(body: unknown, ctx: RequestContext): unknown;
  /** Present when the route streams. */
  stream?(ctx: RequestContext): StreamTranslator;
}

/** One provider of the OpenAI-compatible family: a row of data, no code of its own. */
export interface OpenAiCompatibleProvider {
  /** As clients pass it in `x-gateway-provider`: lowercase. */
  id: string;
  displayName: string;
  /** Base URL including the version prefix (`https://api.groq.com/openai/v1`). */
  baseUrl: string;
  routes: readonly GatewayRoute[];
  /** Default: bearer. */
  auth?: AuthStyle;
  /**
   * The public base URL holds an account- or deployment-specific part (Cloudflare account id,
   * Predibase tenant), so the caller must give the full base URL as the custom host.
   */
  requiresCustomHost?: boolean;
  /** Self-hosted servers (Ollama, vLLM, LM Studio) often run without a key. */
  apiKeyOptional?: boolean;
  /** Paths that differ from the OpenAI layout, by route. */
  paths?: Partial<Record<GatewayRoute, string>>;
  translations?: Partial<Record<GatewayRoute, RouteTranslation>>;
  extraHeaders?(credentials: ProviderCredentials): Record<string, string>;
  /** Why the entry looks the way it does (sunset service, host needs an account id...). */
  note?: string;
}

function authHeaders(
  provider: OpenAiCompatibleProvider,
  credentials: ProviderCredentials,
): Record<string, string> {
  const apiKey = credentials.apiKey;
  if (!apiKey) {
    if (provider.apiKeyOptional) return {};
    throw missingCredential(`${provider.displayName} needs an API key`, 'authorization');
  }
  const auth = provider.auth ?? { kind: 'bearer' };
  return auth.kind === 'bearer' ? { authorization: `Bearer ${apiKey}` } : { [auth.name]: apiKey };
}

/** Builds the adapter for one OpenAI-compatible provider. */
export function createOpenAiCompatibleAdapter(provider: OpenAiCompatibleProvider): ProviderAdapter {
  const routes: ReadonlySet<GatewayRoute> = new Set(provider.routes);
  const translations = provider.translations ?? {};

  return {
    id: provider.id,
    displayName: provider.displayName,
    routes,

    isOpenAiNative(route: GatewayRoute): boolean {
      return routes.has(route) && translations[route] === undefined;
    },

    buildRequest(ctx: RequestContext): UpstreamRequest {
      if (!routes.has(ctx.route)) throw unsupportedRoute(provider.displayName, ctx.route);
      if (provider.requiresCustomHost && !ctx.credentials.customHost) {
        throw new ProviderRequestError(
          `${provider.displayName} needs the full base URL of your account as the custom host (x-gateway-custom-host)`,
          'custom_host',
        );
      }
      const base = resolveBaseUrl(ctx.credentials, provider.baseUrl);
      const headers = {
        ...authHeaders(provider, ctx.credentials),
        ...provider.extraHeaders?.(ctx.credentials),
      };
      const translation = translations[ctx.route];
      if (translation) {
        const body = JSON.stringify(translation.request(ctx.body ?? {}, ctx));
        return buildUpstreamRequest(
          ctx,
          'POST',
          joinUrl(base, translation.path),
          headers,
          body,
          'application/json',
        );
      }
      const path = provider.paths?.[ctx.route] ?? openAiRoutePath(ctx);
      const { body, contentType } = passthroughBody(ctx);
      return buildUpstreamRequest(ctx, ctx.method, joinUrl(base, path), headers, body, contentType);
    },

    transformResponse(ctx: RequestContext, body: unknown): unknown {
      const translation = translations[ctx.route];
      return translation ? translation.response(body, ctx) : body;
    },

    createStreamTranslator(ctx: RequestContext): StreamTranslator {
      const translation = translations[ctx.route];
      if (translation?.stream) return translation.stream(ctx);
      return createOpenAiPassthroughTranslator();
    },

    transformError: readProviderError,

    extractUsage(_route: GatewayRoute, body: unknown): Usage | undefined {
      return extractOpenAiUsage(body);
    },
  };
}
