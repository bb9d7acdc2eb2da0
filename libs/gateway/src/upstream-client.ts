import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, Dispatcher, errors } from 'undici';
import type { UpstreamRequest } from '@switchboard/providers';
import { UpstreamBody } from './upstream-body';

/**
 * Cancels one upstream call: an EventEmitter with `aborted` and an `abort` event, a fraction of the
 * cost of an AbortController (an EventTarget), made once per request.
 */
export class UpstreamCancel extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** What cancels a call: the gateway's own (one per request), or the routing engine's per attempt. */
export type UpstreamSignal = UpstreamCancel | AbortSignal;

/** An upstream answer: status and headers as they came, and the body, read once. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

/** As `request()` does: the signal's reason when it has one, else undici's own abort error. */
function abortReason(signal: UpstreamSignal | undefined): Error {
  const reason = (signal as AbortSignal | undefined)?.reason;
  return reason instanceof Error ? reason : new errors.RequestAbortedError();
}

/**
 * One call as an undici dispatch handler: the promise settles at the headers, and the body is fed
 * chunk by chunk into an UpstreamBody. Cheaper than `request()`, which wraps every answer in a
 * Readable stream and adds an AsyncResource, a promise chain and ticks per read; on loopback that
 * was a fifth of what the gateway adds to a call.
 */
class UpstreamCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private body: UpstreamBody | null = null;
  /** The reason the call was cancelled before undici gave it a controller. */
  private cancelledWith: Error | null = null;
  private readonly onAbort = () => this.cancel();

  constructor(
    private readonly signal: UpstreamSignal | undefined,
    private readonly resolve: (response: UpstreamResponse) => void,
    private readonly reject: (error: Error) => void,
  ) {
    if (!signal) return;
    if (signal instanceof UpstreamCancel) signal.once('abort', this.onAbort);
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cancelledWith) controller.abort(this.cancelledWith);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // An informational answer (100 Continue, 103 Early Hints) is followed by the real one.
    if (statusCode < 200 || this.body) return;
    this.body = new UpstreamBody(controller);
    this.resolve({ statusCode, headers, body: this.body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.body?.push(chunk);
  }

  onResponseEnd(): void {
    this.stopListening();
    this.body?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.stopListening();
    if (this.body) this.body.fail(error);
    else this.reject(error);
  }

  private cancel(): void {
    const reason = abortReason(this.signal);
    if (this.controller) this.controller.abort(reason);
    else this.cancelledWith = reason;
  }

  private stopListening(): void {
    const signal = this.signal;
    if (!signal) return;
    if (signal instanceof UpstreamCancel) signal.off('abort', this.onAbort);
    else signal.removeEventListener('abort', this.onAbort);
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

  /** Resolves at the answer's headers; rejects when the call fails (or is cancelled) before them. */
  call(upstream: UpstreamRequest, signal?: UpstreamSignal): Promise<UpstreamResponse> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const { origin, path } = splitUrl(upstream.url);
    return new Promise<UpstreamResponse>((resolve, reject) => {
      this.agent.dispatch(
        { origin, path, method: upstream.method, headers: upstream.headers, body: upstream.body ?? null },
        new UpstreamCall(signal, resolve, reject),
      );
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
