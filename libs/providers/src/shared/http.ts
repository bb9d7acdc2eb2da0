import type {
  GatewayRoute,
  HttpMethod,
  ProviderCredentials,
  RequestContext,
  UpstreamRequest,
} from '../types';

/** Path (after the API version prefix) and method of each fixed route in the OpenAI API. */
export const OPENAI_ROUTE_PATHS: Readonly<Record<Exclude<GatewayRoute, 'openai.proxy'>, string>> = {
  'chat.completions': '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  moderations: '/moderations',
  'images.generations': '/images/generations',
  'images.edits': '/images/edits',
  'images.variations': '/images/variations',
  'audio.speech': '/audio/speech',
  'audio.transcriptions': '/audio/transcriptions',
  'audio.translations': '/audio/translations',
  rerank: '/rerank',
  messages: '/messages',
  responses: '/responses',
  'models.list': '/models',
  'models.retrieve': '/models',
};

/** Routes whose upload is multipart/form-data, forwarded as the raw bytes the caller sent. */
export const MULTIPART_ROUTES: ReadonlySet<GatewayRoute> = new Set([
  'images.edits',
  'images.variations',
  'audio.transcriptions',
  'audio.translations',
]);

export const ALL_OPENAI_ROUTES: ReadonlySet<GatewayRoute> = new Set<GatewayRoute>([
  'chat.completions',
  'completions',
  'embeddings',
  'moderations',
  'images.generations',
  'images.edits',
  'images.variations',
  'audio.speech',
  'audio.transcriptions',
  'audio.translations',
  'responses',
  'models.list',
  'models.retrieve',
  'openai.proxy',
]);

/**
 * Path for `route` in the OpenAI layout. Routes that address a resource (`models.retrieve`,
 * `responses/{id}`, `openai.proxy`) take the caller's path, which already holds the id and query.
 */
export function openAiRoutePath(ctx: Pick<RequestContext, 'route' | 'path'>): string {
  const { route, path } = ctx;
  if (route === 'openai.proxy') return path;
  if (route === 'models.retrieve') return path.startsWith('/models/') ? path : OPENAI_ROUTE_PATHS[route];
  if (route === 'responses' && path.startsWith('/responses')) return path;
  return OPENAI_ROUTE_PATHS[route];
}

/** Base URL with the caller's custom host taking precedence; no trailing slash. */
export function resolveBaseUrl(credentials: ProviderCredentials, defaultBaseUrl: string): string {
  const base =
    credentials.customHost && credentials.customHost.length > 0 ? credentials.customHost : defaultBaseUrl;
  return base.endsWith('/') ? base.replace(/\/+$/, '') : base;
}

export function joinUrl(base: string, path: string): string {
  if (path.length === 0) return base;
  const trimmedBase = base.endsWith('/') ? base.slice(0, -1) : base;
  return path.startsWith('/') ? trimmedBase + path : `${trimmedBase}/${path}`;
}

/** Adds `params` to a URL that may already carry a query string. */
export function withQuery(url: string, params: Record<string, string>): string {
  const query = new URLSearchParams(params).toString();
  if (query.length === 0) return url;
  return url + (url.includes('?') ? '&' : '?') + query;
}

/**
 * The body to send for a pass-through request: the caller's raw bytes when the gateway kept them
 * (multipart uploads, forwarded intact with their boundary), else the JSON body serialized once.
 */
export function passthroughBody(ctx: RequestContext): { body?: string | Uint8Array; contentType?: string } {
  if (ctx.rawBody !== undefined) {
    return { body: ctx.rawBody, contentType: ctx.rawContentType ?? 'application/octet-stream' };
  }
  if (ctx.body !== undefined && ctx.method !== 'GET' && ctx.method !== 'DELETE') {
    return { body: JSON.stringify(ctx.body), contentType: 'application/json' };
  }
  return {};
}

/**
 * Assembles the upstream request. Forwarded caller headers go first so that the adapter's own
 * authentication and content type can never be overridden by a client.
 */
export function buildUpstreamRequest(
  ctx: Pick<RequestContext, 'forwardHeaders'>,
  method: HttpMethod,
  url: string,
  headers: Record<string, string>,
  body?: string | Uint8Array,
  contentType?: string,
): UpstreamRequest {
  const merged: Record<string, string> = {};
  if (ctx.forwardHeaders) {
    for (const key of Object.keys(ctx.forwardHeaders)) merged[key.toLowerCase()] = ctx.forwardHeaders[key];
  }
  if (contentType !== undefined) merged['content-type'] = contentType;
  for (const key of Object.keys(headers)) merged[key] = headers[key];
  const request: UpstreamRequest = { method, url, headers: merged };
  if (body !== undefined) request.body = body;
  return request;
}

/** Streaming answers arrive as SSE; asking for it explicitly avoids proxies buffering them. */
export function acceptHeader(stream: boolean): string {
  return stream ? 'text/event-stream' : 'application/json';
}
