import type { RequestContext } from '../types';

/** A request context with test defaults; override what the case is about. */
export function makeContext(overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    route: 'chat.completions',
    method: 'POST',
    path: '/chat/completions',
    credentials: { apiKey: 'sk-test' },
    stream: false,
    includeUsage: false,
    strictOpenAiCompliance: true,
    ...overrides,
  };
}

const decoder = new TextDecoder();

/** Parses the JSON body of an upstream request built by an adapter. */
export function jsonBody(body: string | Uint8Array | undefined): unknown {
  if (body === undefined) return undefined;
  return JSON.parse(typeof body === 'string' ? body : decoder.decode(body));
}
