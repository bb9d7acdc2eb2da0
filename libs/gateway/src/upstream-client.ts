import { EventEmitter } from 'node:events';
import { Agent, Dispatcher } from 'undici';
import type { UpstreamRequest } from '@switchboard/providers';

/**
 * Cancels one upstream call. undici takes an EventEmitter with `aborted` and an `abort` event as
 * its signal; it costs a fraction of an AbortController (an EventTarget), made once per request.
 */
export class UpstreamCancel extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * Origin and path of an absolute http(s) URL, split by hand: a URL object per call is garbage on
 * the hot path. An authority with user info goes through URL, which drops it as before.
 */
export function splitUrl(url: string): { origin: string; path: string } {
  const authorityStart = url.indexOf('//') + 2;
  const pathStart = url.indexOf('/', authorityStart);
  const origin = pathStart === -1 ? url : url.slice(0, pathStart);
  const path = pathStart === -1 ? '/' : url.slice(pathStart);
  return origin.includes('@', authorityStart) ? { origin: new URL(url).origin, path } : { origin, path };
}

/**
 * One keep-alive connection pool per upstream origin (an undici Agent), owned by one gateway
 * instance. Long timeouts: model calls can think for minutes; config `request_timeout` bounds
 * them per target.
 */
export class UpstreamClient {
  private readonly agent = new Agent({
    connections: 1024,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });

  call(upstream: UpstreamRequest, signal: UpstreamCancel | AbortSignal): Promise<Dispatcher.ResponseData> {
    return this.agent.request({
      ...splitUrl(upstream.url),
      method: upstream.method,
      headers: upstream.headers,
      body: upstream.body,
      signal,
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
