/** OpenAI error `type` values we emit. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'unprocessable_entity_error'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'server_error';

const TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'unprocessable_entity_error',
  429: 'rate_limit_error',
};

export function errorTypeForStatus(status: number): ErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

export interface ErrorEnvelope {
  error: { message: string; type: string | null; param: string | null; code: string | null };
}

/**
 * Every error we mean to show a client. Areas declare their codes in `<area>.errors.ts` as
 * factories returning AppError; the global filter turns it into the OpenAI envelope.
 */
export class AppError extends Error {
  readonly type: string;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    type?: string,
    /** Extra response headers, e.g. Retry-After on 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.type = type ?? errorTypeForStatus(status);
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** Errors shared by every area. */
export const CommonErrors = {
  validation: (message: string, param: string | null) => new AppError(400, 'invalid_request', message, param),
  notFound: (resource: string, id?: string) =>
    new AppError(
      404,
      'not_found',
      id ? `${resource} '${id}' was not found` : `${resource} was not found`,
      null,
    ),
  routeNotFound: (method: string, path: string) =>
    new AppError(404, 'route_not_found', `No route for ${method} ${path}`, null),
  conflict: (message: string, param: string | null = null) => new AppError(409, 'conflict', message, param),
  unauthenticated: (message = 'Missing API key: send it in the x-gateway-api-key header') =>
    new AppError(401, 'missing_api_key', message, null),
  invalidKey: () => new AppError(401, 'invalid_api_key', 'The API key is invalid, expired or revoked', null),
  forbidden: (message: string) => new AppError(403, 'forbidden', message, null),
  unprocessable: (message: string, param: string | null = null) =>
    new AppError(422, 'unprocessable_entity', message, param),
  internal: () =>
    new AppError(500, 'internal_error', 'The server had an error while processing the request', null),
};
