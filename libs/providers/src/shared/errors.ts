import type { ProviderError } from '../types';
import { asArray, asRecord, asString, isRecord } from './json';

/** OpenAI error `type` for an HTTP status, used when the upstream does not name one. */
export function errorTypeForStatus(status: number): string {
  if (status === 400 || status === 422) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 408 || status === 504) return 'timeout_error';
  if (status === 409) return 'conflict_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  return 'api_error';
}

function stringOrNull(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return null;
}

/** FastAPI-style `detail`: a string, or a list of `{loc, msg}` validation items. */
function messageFromDetail(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  const items = asArray(detail);
  if (items) {
    const parts = items
      .map((item) => {
        const record = asRecord(item);
        if (!record) return typeof item === 'string' ? item : undefined;
        const msg = asString(record.msg) ?? asString(record.message);
        const loc = asArray(record.loc)?.join('.');
        return msg && loc ? `${loc}: ${msg}` : msg;
      })
      .filter((part): part is string => part !== undefined);
    if (parts.length > 0) return parts.join('; ');
  }
  const record = asRecord(detail);
  return record ? (asString(record.message) ?? asString(record.msg)) : undefined;
}

/**
 * Reads an error envelope out of the usual upstream error bodies:
 * OpenAI and compatibles `{error: {message, type, param, code}}`; Anthropic
 * `{type: "error", error: {type, message}}`; Google `{error: {code, message, status}}` (also as a
 * one-element array); `{error: "text"}`; Cohere and AWS `{message}` / `{Message}`; FastAPI
 * `{detail}`; Cloudflare `{errors: [{message}]}`; or plain text. Never throws.
 */
export function readProviderError(status: number, body: unknown, fallbackMessage?: string): ProviderError {
  const defaultType = errorTypeForStatus(status);
  const defaultMessage = fallbackMessage ?? `Upstream request failed with status ${status}`;
  const envelope = Array.isArray(body) && body.length > 0 ? body[0] : body;

  if (typeof envelope === 'string') {
    const text = envelope.trim();
    return {
      message: text.length > 0 ? text.slice(0, 2000) : defaultMessage,
      type: defaultType,
      param: null,
      code: null,
    };
  }
  if (!isRecord(envelope)) return { message: defaultMessage, type: defaultType, param: null, code: null };

  const error = envelope.error;
  if (isRecord(error)) {
    const message = asString(error.message) ?? messageFromDetail(error.details) ?? defaultMessage;
    // Google puts the canonical status name (`INVALID_ARGUMENT`) in `status` and the HTTP code in `code`.
    const googleStatus = asString(error.status);
    return {
      message,
      type: asString(error.type) ?? defaultType,
      param: stringOrNull(error.param),
      code: stringOrNull(googleStatus ?? error.code),
    };
  }
  if (typeof error === 'string') {
    return {
      message: asString(envelope.message) ?? error,
      type: asString(envelope.type) ?? defaultType,
      param: stringOrNull(envelope.param),
      code: stringOrNull(envelope.code),
    };
  }

  const errors = asArray(envelope.errors);
  if (errors && errors.length > 0) {
    const first = asRecord(errors[0]);
    const message = first ? asString(first.message) : asString(errors[0]);
    if (message) {
      return { message, type: defaultType, param: null, code: first ? stringOrNull(first.code) : null };
    }
  }

  const message =
    asString(envelope.message) ??
    asString(envelope.Message) ??
    messageFromDetail(envelope.detail) ??
    asString(envelope.error_message) ??
    asString(envelope.msg);
  return {
    message: message ?? defaultMessage,
    type: asString(envelope.type) ?? asString(envelope.__type) ?? defaultType,
    param: null,
    code: stringOrNull(envelope.code),
  };
}

/**
 * A request the adapter cannot build: the OpenAI-shaped body has no equivalent for the provider, a
 * route it lacks (400), or missing credentials (401). The gateway answers with `status` and
 * `error` instead of calling upstream.
 */
export class ProviderRequestError extends Error {
  readonly error: ProviderError;

  constructor(
    message: string,
    param: string | null = null,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'ProviderRequestError';
    this.error = { message, type: errorTypeForStatus(status), param, code: null };
  }
}

export function unsupportedRoute(displayName: string, route: string): ProviderRequestError {
  return new ProviderRequestError(`${displayName} does not support the ${route} route`, null, 400);
}

export function missingCredential(message: string, param: string | null = null): ProviderRequestError {
  return new ProviderRequestError(message, param, 401);
}
