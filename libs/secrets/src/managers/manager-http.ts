import { request } from 'undici';
import { SecretManagerError } from './secret-manager.types';

/** A secret manager answer larger than this is not a secret we can use; refuse it early. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface ManagerHttpRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface ManagerHttpResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/**
 * One HTTP exchange with a secret manager (or its token endpoint). Connection failures and
 * timeouts become SecretManagerError naming the origin only: a URL never carries a credential
 * here (query strings hold only api versions and resource names).
 */
export async function managerHttp(req: ManagerHttpRequest, timeoutMs: number): Promise<ManagerHttpResponse> {
  const origin = safeOrigin(req.url);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += buffer.length;
      if (size > MAX_RESPONSE_BYTES) {
        response.body.destroy();
        throw new SecretManagerError(
          'invalid_response',
          `${origin} answered more than ${MAX_RESPONSE_BYTES} bytes`,
          response.statusCode,
        );
      }
      chunks.push(buffer);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { status: response.statusCode, headers, text: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    if (error instanceof SecretManagerError) throw error;
    if (signal.aborted || isTimeout(error)) {
      throw new SecretManagerError('timeout', `${origin} did not answer within ${timeoutMs} ms`);
    }
    throw new SecretManagerError('unreachable', `could not reach ${origin}: ${networkReason(error)}`);
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function asObject(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A short, credential-free excerpt of an error text from a manager. */
export function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the secret manager';
  }
}

function isTimeout(error: unknown): boolean {
  const code = (error as { code?: string })?.code ?? '';
  const name = (error as { name?: string })?.name ?? '';
  return (
    name === 'TimeoutError' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  );
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = (error as { code?: string })?.code ?? cause?.code;
  const message = (error as Error)?.message ?? String(error);
  if (code && !message.includes(code)) return `${code} ${message}`;
  return message;
}
