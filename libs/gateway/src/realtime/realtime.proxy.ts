import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { IncomingHttpHeaders, IncomingMessage, STATUS_CODES, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import WebSocket, { WebSocketServer } from 'ws';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { AppError, CommonErrors, TRACE_ID_HEADER, timeOrderedId, toAppError } from '@switchboard/common';
import { API_KEY_HEADER, AuthErrors, AuthenticationService } from '@switchboard/auth';
import { LOG_SINK, LogRecord, LogSink } from '@switchboard/observability';
import { GatewayErrors } from '../gateway.errors';
import { ResolvedTarget, resolveTarget } from '../provider-resolution';
import { readTraceHeaders } from '../request-headers';
import { applyTraceHeaders, completeLogRecord, newLogRecord } from '../request-log';
import { RealtimeSession, RealtimeSessionSummary } from './realtime-session';
import {
  RealtimeUpstream,
  headersWithProtocolCredentials,
  realtimeUpstream,
  selectProtocol,
} from './realtime-upstream';

export const REALTIME_PATH = '/v1/realtime';
const UPSTREAM_HANDSHAKE_TIMEOUT_MS = 30_000;
const MAX_UPSTREAM_ERROR_BYTES = 64 * 1024;
const MAX_TRACE_ID_LENGTH = 128;
const TRACE_ID = Symbol('realtimeTraceId');

/** The upstream refused the handshake with an HTTP answer. */
class UpstreamRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upstream answered ${status}`);
  }
}

/** The client hung up while the gateway was still connecting upstream. */
class ClientGone extends Error {}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A caller's trace id is echoed in a raw header line: only printable ASCII, bounded. */
function traceIdOf(headers: IncomingHttpHeaders): string {
  const sent = header(headers, TRACE_ID_HEADER);
  return sent && sent.length <= MAX_TRACE_ID_LENGTH && /^[\x21-\x7e]+$/.test(sent) ? sent : timeOrderedId();
}

/**
 * The realtime WebSocket proxy: `GET /v1/realtime?model=…` upgraded to a WebSocket and relayed to
 * the provider's realtime endpoint. It listens on the HTTP server's `upgrade` event (Fastify never
 * sees upgrades) and follows the data-plane pipeline: authenticate the gateway key (a header, or a
 * subprotocol entry for browsers), resolve the provider like any other call, connect upstream
 * first (so a refusal comes back as an HTTP error in the envelope, with the provider's status),
 * then accept the client and relay. One log record per session, written when it ends.
 */
@Injectable()
export class RealtimeProxy implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RealtimeProxy.name);
  private readonly sessions = new Set<RealtimeSession>();
  private readonly finished = new Set<Promise<void>>();
  private server: Server | null = null;
  private readonly wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    handleProtocols: (protocols) => selectProtocol(protocols),
  });
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    void this.upgrade(request, socket, head);
  };

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly authentication: AuthenticationService,
    @Inject(LOG_SINK) private readonly logs: LogSink,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.wss.on('headers', (headers, request) => {
      const traceId = (request as IncomingMessage & { [TRACE_ID]?: string })[TRACE_ID];
      if (traceId) headers.push(`${TRACE_ID_HEADER}: ${traceId}`);
    });
  }

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
  }

  /** Before the log writer drains: every open session is closed (1001) and its record queued. */
  async onModuleDestroy(): Promise<void> {
    this.server?.off('upgrade', this.onUpgrade);
    for (const session of this.sessions) session.close(1001, 'server shutting down');
    await Promise.all([...this.finished]);
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    const startedAt = performance.now();
    const url = new URL(request.url ?? '/', 'http://gateway.invalid');
    const headers = headersWithProtocolCredentials(request.headers);
    const traceId = traceIdOf(headers);
    if (url.pathname !== REALTIME_PATH && url.pathname !== `${REALTIME_PATH}/`) {
      // Another upgrade listener may own this path; answer only when there is none.
      if (this.server && this.server.listenerCount('upgrade') === 1)
        reject(socket, CommonErrors.routeNotFound(request.method ?? 'GET', url.pathname), traceId);
      return;
    }

    let record: LogRecord;
    try {
      const key = header(headers, API_KEY_HEADER);
      if (!key) throw AuthErrors.missingKey();
      const principal = await this.authentication.authenticate(key);
      if (!principal.permissions.has('completions.write'))
        throw AuthErrors.missingPermission('completions.write');
      record = newLogRecord('realtime', principal, {
        requestId: timeOrderedId(),
        traceId,
        method: request.method ?? 'GET',
        path: request.url ?? REALTIME_PATH,
      });
      record.isStream = true;
      applyTraceHeaders(record, readTraceHeaders(headers), principal);
    } catch (error) {
      // Like the HTTP data plane: a request refused before it is authenticated has no log record.
      reject(socket, toAppError(error), traceId);
      return;
    }

    let target: ResolvedTarget | null = null;
    let session: RealtimeSession;
    try {
      target = this.resolve(headers);
      if (!target) throw GatewayErrors.noProvider();
      record.provider = target.adapter.id;
      record.providerSlug = target.providerSlug;
      const where = realtimeUpstream(target, url.searchParams, headers);
      record.model = where.model;
      session = await this.connect(where, socket);
    } catch (error) {
      const appError = this.toUpstreamError(error, target);
      if (appError) {
        record.status = appError.status;
        record.errorCode = appError.code;
        record.errorMessage = appError.message;
        reject(socket, appError, traceId);
      } else {
        record.status = 499;
        record.errorCode = 'client_closed_request';
        record.errorMessage = 'The client closed the connection';
      }
      this.finish(record, startedAt, null);
      return;
    }

    (request as IncomingMessage & { [TRACE_ID]?: string })[TRACE_ID] = traceId;
    this.sessions.add(session);
    const finished = session.done.then((summary) => {
      this.sessions.delete(session);
      this.finish(record, startedAt, record.status === 101 ? summary : null);
    });
    this.finished.add(finished);
    void finished.finally(() => this.finished.delete(finished));
    this.wss.handleUpgrade(request, socket, head, (client) => {
      record.status = 101;
      session.attachClient(client);
    });
    // handleUpgrade destroys a socket whose handshake is invalid without calling back.
    socket.once('close', () => {
      if (record.status !== 0) return;
      record.status = 400;
      record.errorCode = 'invalid_handshake';
      record.errorMessage = 'The WebSocket handshake was invalid';
      session.abandon();
    });
  }

  /** Which provider to call, exactly as for the HTTP routes. */
  private resolve(headers: IncomingHttpHeaders): ResolvedTarget | null {
    return resolveTarget(headers);
  }

  /**
   * The upstream handshake, answered with the session built on the open socket; rejects with
   * UpstreamRefused, ClientGone, or the socket error.
   */
  private connect(where: RealtimeUpstream, client: Duplex): Promise<RealtimeSession> {
    return new Promise((resolve, reject) => {
      const upstream = new WebSocket(where.url, {
        headers: where.headers,
        perMessageDeflate: false,
        handshakeTimeout: UPSTREAM_HANDSHAKE_TIMEOUT_MS,
      });
      const clientClosed = () => {
        upstream.terminate();
        reject(new ClientGone());
      };
      client.once('close', clientClosed);
      upstream.once('open', () => {
        client.off('close', clientClosed);
        // Built right away, not after the await: a message sent with the handshake answer is emitted
        // before the caller resumes, and the session must be listening to hold it.
        resolve(new RealtimeSession(upstream));
      });
      upstream.once('unexpected-response', (upstreamRequest, response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_UPSTREAM_ERROR_BYTES) chunks.push(chunk);
        });
        response.on('end', () => {
          client.off('close', clientClosed);
          upstreamRequest.destroy();
          reject(new UpstreamRefused(response.statusCode ?? 502, Buffer.concat(chunks).toString('utf8')));
        });
        response.on('error', (error) => reject(error));
      });
      upstream.once('error', (error) => {
        client.off('close', clientClosed);
        reject(error);
      });
    });
  }

  /** The answer for a failed connection; null when the client is gone and nobody reads one. */
  private toUpstreamError(error: unknown, target: ResolvedTarget | null): AppError | null {
    if (error instanceof ClientGone) return null;
    if (error instanceof AppError) return error;
    const provider = target?.adapter.id ?? 'the provider';
    if (error instanceof UpstreamRefused && target) {
      let parsed: unknown = error.body;
      try {
        parsed = JSON.parse(error.body);
      } catch {
        // Not JSON: the adapter reads the text.
      }
      const shaped = target.adapter.transformError(error.status, parsed);
      return new AppError(
        error.status,
        shaped.code ?? `upstream_${error.status}`,
        shaped.message,
        shaped.param ?? null,
        shaped.type ?? undefined,
      );
    }
    const message = (error as Error).message ?? String(error);
    if (/handshake has timed out/i.test(message)) return GatewayErrors.upstreamTimeout(provider);
    const code = (error as { code?: string }).code;
    if (code) return GatewayErrors.upstreamUnreachable(provider, code);
    return toAppError(error);
  }

  /** The session's record: duration, counts, close, usage and cost; queued like any other. */
  private finish(record: LogRecord, startedAt: number, summary: RealtimeSessionSummary | null): void {
    let text = '';
    if (summary) {
      const { closeCode } = summary;
      if (closeCode !== 1000 && closeCode !== 1001 && closeCode !== 1005) {
        record.errorCode = `websocket_close_${closeCode}`;
        record.errorMessage = summary.closeReason || `The session closed with code ${closeCode}`;
      }
      const cap = this.config.logBodyMaxBytes;
      text = JSON.stringify({
        object: 'realtime.session',
        messages: { from_client: summary.messagesFromClient, from_upstream: summary.messagesFromUpstream },
        bytes: { from_client: summary.bytesFromClient, from_upstream: summary.bytesFromUpstream },
        responses: summary.responses,
        close: { by: summary.closedBy, code: summary.closeCode, reason: summary.closeReason },
      }).slice(0, Math.max(0, cap));
    }
    completeLogRecord(
      record,
      { startedAt, firstByteAt: summary?.firstUpstreamMessageAt ?? null, endedAt: performance.now() },
      summary?.usage,
      text,
    );
    this.logs.enqueue(record);
  }
}

/** An HTTP answer on a socket that was never upgraded, in the error envelope. */
function reject(socket: Duplex, error: AppError, traceId: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(error.toEnvelope());
  const extra = Object.entries(error.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
      'connection: close\r\n' +
      'content-type: application/json\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `${TRACE_ID_HEADER}: ${traceId}\r\n` +
      extra +
      '\r\n' +
      body,
  );
}
