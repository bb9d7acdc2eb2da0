import type { IncomingHttpHeaders } from 'node:http';
import { GatewayErrors } from '../gateway.errors';
import type { ResolvedTarget } from '../provider-resolution';

/** OpenAI's API root; its realtime endpoint is `wss://api.openai.com/v1/realtime`. */
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The Azure OpenAI API version that serves `/openai/realtime` when the caller names none. */
export const AZURE_REALTIME_API_VERSION = '2024-10-01-preview';

/** Where a realtime session goes and what the upstream handshake carries. */
export interface RealtimeUpstream {
  url: string;
  headers: Record<string, string>;
  /** The model (OpenAI) or deployment (Azure) of the session, for the log. */
  model: string | null;
}

/**
 * Subprotocol entries a browser can use instead of headers (a browser WebSocket cannot set
 * headers): `x-gateway-api-key.<key>`, `x-gateway-provider.<name>`, and OpenAI's own
 * `openai-insecure-api-key.<provider key>` and `openai-beta.realtime-v1`. Each becomes the header
 * it stands for; headers actually sent win.
 */
const PROTOCOL_HEADERS: Readonly<Record<string, string>> = {
  'x-gateway-api-key.': 'x-gateway-api-key',
  'x-gateway-provider.': 'x-gateway-provider',
  'openai-insecure-api-key.': 'authorization',
  'openai-beta.': 'openai-beta',
};

/** The offered subprotocols, trimmed, in order. */
export function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const raw = headers['sec-websocket-protocol'];
  const text = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** The request headers with the credentials carried in subprotocol entries added. */
export function headersWithProtocolCredentials(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const merged: IncomingHttpHeaders = { ...headers };
  for (const entry of offeredProtocols(headers)) {
    for (const [prefix, header] of Object.entries(PROTOCOL_HEADERS)) {
      if (!entry.startsWith(prefix) || entry.length === prefix.length || merged[header] !== undefined)
        continue;
      const value = entry.slice(prefix.length);
      if (header === 'authorization') merged[header] = `Bearer ${value}`;
      else if (header === 'openai-beta') merged[header] = value.replace(/-(v\d+)$/, '=$1');
      else merged[header] = value;
    }
  }
  return merged;
}

/**
 * The subprotocol to answer with: never an entry that carries a credential. `realtime` when
 * offered (OpenAI's browser clients offer it), else the first other entry, else none.
 */
export function selectProtocol(offered: Iterable<string>): string | false {
  let fallback: string | false = false;
  for (const entry of offered) {
    if (Object.keys(PROTOCOL_HEADERS).some((prefix) => entry.startsWith(prefix))) continue;
    if (entry === 'realtime') return entry;
    if (fallback === false) fallback = entry;
  }
  return fallback;
}

function toWebSocketUrl(httpUrl: string): URL {
  const url = new URL(httpUrl);
  if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol === 'http:') url.protocol = 'ws:';
  return url;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The provider's realtime endpoint for a resolved target. OpenAI (and a custom host speaking its
 * protocol): `<base>/realtime?<query>` with the bearer key; the `OpenAI-Beta` header is forwarded
 * as the caller sent it, since it selects the beta or the GA protocol. Azure OpenAI:
 * `/openai/realtime?api-version=…&deployment=…` with `api-key` (or an Entra bearer token). Query
 * parameters other than the gateway's pass through unchanged.
 */
export function realtimeUpstream(
  target: ResolvedTarget,
  query: URLSearchParams,
  headers: IncomingHttpHeaders,
): RealtimeUpstream {
  const { adapter, credentials } = target;
  if (adapter.id === 'openai') {
    if (!credentials.apiKey)
      throw GatewayErrors.realtimeCredentials('OpenAI needs an API key', 'authorization');
    const url = toWebSocketUrl(`${(credentials.customHost ?? OPENAI_BASE_URL).replace(/\/+$/, '')}/realtime`);
    for (const [name, value] of query) url.searchParams.append(name, value);
    const upstreamHeaders: Record<string, string> = { authorization: `Bearer ${credentials.apiKey}` };
    const beta = header(headers, 'openai-beta');
    if (beta) upstreamHeaders['openai-beta'] = beta;
    if (credentials.openaiOrganization)
      upstreamHeaders['openai-organization'] = credentials.openaiOrganization;
    if (credentials.openaiProject) upstreamHeaders['openai-project'] = credentials.openaiProject;
    return { url: url.toString(), headers: upstreamHeaders, model: query.get('model') };
  }
  if (adapter.id === 'azure-openai') {
    const base = credentials.customHost
      ? credentials.customHost.replace(/\/+$/, '')
      : credentials.azureResourceName
        ? `https://${credentials.azureResourceName}.openai.azure.com`
        : null;
    if (!base) {
      throw GatewayErrors.realtimeCredentials(
        'Azure OpenAI needs the resource name (or a custom host)',
        'x-gateway-azure-resource-name',
      );
    }
    const deployment = credentials.azureDeploymentId ?? query.get('deployment') ?? query.get('model');
    if (!deployment) {
      throw GatewayErrors.realtimeCredentials(
        'Azure OpenAI needs a deployment id',
        'x-gateway-azure-deployment-id',
      );
    }
    const url = toWebSocketUrl(`${base}/openai/realtime`);
    for (const [name, value] of query) if (name !== 'model') url.searchParams.append(name, value);
    url.searchParams.set(
      'api-version',
      credentials.azureApiVersion ?? query.get('api-version') ?? AZURE_REALTIME_API_VERSION,
    );
    url.searchParams.set('deployment', deployment);
    let upstreamHeaders: Record<string, string>;
    if (credentials.azureEntraToken)
      upstreamHeaders = { authorization: `Bearer ${credentials.azureEntraToken}` };
    else if (credentials.apiKey) upstreamHeaders = { 'api-key': credentials.apiKey };
    else
      throw GatewayErrors.realtimeCredentials(
        'Azure OpenAI needs an API key or an Entra token',
        'authorization',
      );
    return { url: url.toString(), headers: upstreamHeaders, model: deployment };
  }
  throw GatewayErrors.routeNotSupported(adapter.id, 'realtime');
}
