import { Agent, Dispatcher } from 'undici';
import type { UpstreamRequest } from '@switchboard/providers';

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

  call(upstream: UpstreamRequest, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return this.agent.request({
      origin: new URL(upstream.url).origin,
      path: upstream.url.slice(upstream.url.indexOf('/', upstream.url.indexOf('//') + 2)) || '/',
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
