import { AppError } from '@switchboard/common';

export const GatewayErrors = {
  malformedMetadata: () =>
    new AppError(
      400,
      'invalid_metadata',
      'x-gateway-metadata must be a JSON object of string values',
      'x-gateway-metadata',
    ),
  noProvider: () =>
    new AppError(
      400,
      'provider_required',
      'Name a provider: x-gateway-provider (with Authorization), x-gateway-virtual-key, or x-gateway-config',
      'x-gateway-provider',
    ),
  unknownProvider: (name: string) =>
    new AppError(400, 'unknown_provider', `Unknown provider '${name}'`, 'x-gateway-provider'),
  providerSlugNotFound: (slug: string) =>
    new AppError(
      404,
      'provider_not_found',
      `No provider '@${slug}' is available to this workspace`,
      'x-gateway-provider',
    ),
  virtualKeyNotFound: (slug: string) =>
    new AppError(
      404,
      'virtual_key_not_found',
      `No virtual key '${slug}' is available to this workspace`,
      'x-gateway-virtual-key',
    ),
  configNotFound: (ref: string) =>
    new AppError(404, 'config_not_found', `No config '${ref}' was found`, 'x-gateway-config'),
  invalidConfig: (message: string, param: string) => new AppError(400, 'AB01', message, param),
  routeNotSupported: (provider: string, route: string) =>
    new AppError(400, 'route_not_supported', `Provider '${provider}' does not support ${route}`, null),
  invalidCustomHost: () =>
    new AppError(
      400,
      'invalid_custom_host',
      'x-gateway-custom-host must be an http(s) URL',
      'x-gateway-custom-host',
    ),
  upstreamUnreachable: (provider: string, detail: string) =>
    new AppError(502, 'upstream_unreachable', `Could not reach ${provider}: ${detail}`, null, 'api_error'),
  realtimeCredentials: (message: string, param: string) =>
    new AppError(400, 'missing_credentials', message, param),
  upgradeRequired: () =>
    new AppError(
      426,
      'upgrade_required',
      'GET /v1/realtime is a WebSocket endpoint: connect with Connection: Upgrade and Upgrade: websocket',
      null,
    ),
  upstreamTimeout: (provider: string) =>
    new AppError(408, 'upstream_timeout', `${provider} did not answer in time`, null, 'timeout_error'),
};
