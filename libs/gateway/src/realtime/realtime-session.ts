import { performance } from 'node:perf_hooks';
import WebSocket, { RawData } from 'ws';
import type { Usage } from '@switchboard/providers';

/** What one realtime session did, for its log record. */
export interface RealtimeSessionSummary {
  messagesFromClient: number;
  messagesFromUpstream: number;
  bytesFromClient: number;
  bytesFromUpstream: number;
  /** `response.done` events seen; their usage is summed in `usage`. */
  responses: number;
  usage: Usage | undefined;
  /** `performance.now()` of the first upstream message, or null if none came. */
  firstUpstreamMessageAt: number | null;
  closedBy: 'client' | 'upstream' | 'gateway';
  closeCode: number;
  closeReason: string;
}

/** Bytes queued towards one side before the other side is paused (backpressure). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
/** How long the second side gets to complete its closing handshake before it is cut. */
const CLOSE_GRACE_MS = 5_000;
/** WebSocket close reasons are at most 123 bytes. */
const MAX_REASON_BYTES = 123;

/** Codes that may be sent in a close frame (RFC 6455 §7.4; 1004-1006 and 1015 are reserved). */
export function isSendableCloseCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999)
  );
}

function truncateReason(reason: string): string {
  const bytes = Buffer.from(reason);
  if (bytes.length <= MAX_REASON_BYTES) return reason;
  // Cut on a character boundary: decoding a cut multi-byte sequence would add a replacement char.
  let end = MAX_REASON_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString();
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

const RESPONSE_DONE = Buffer.from('"response.done"');

/** Adds the usage of a realtime `response.done` event (`response.usage`) to a running total. */
export function addRealtimeUsage(total: Usage | undefined, event: unknown): Usage | undefined {
  const usage = (event as { response?: { usage?: Record<string, unknown> } } | null)?.response?.usage;
  if (!usage || typeof usage !== 'object') return total;
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  const input = (usage.input_token_details ?? {}) as Record<string, unknown>;
  const output = (usage.output_token_details ?? {}) as Record<string, unknown>;
  const next: Usage = total ?? {
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { audio_tokens: 0 },
  };
  const prompt = number(usage.input_tokens);
  const completion = number(usage.output_tokens);
  next.prompt_tokens += prompt;
  next.completion_tokens += completion;
  next.total_tokens += number(usage.total_tokens) || prompt + completion;
  next.prompt_tokens_details!.cached_tokens! += number(input.cached_tokens);
  next.prompt_tokens_details!.audio_tokens! += number(input.audio_tokens);
  next.completion_tokens_details!.audio_tokens! += number(output.audio_tokens);
  return next;
}

/**
 * Relays one realtime session between the client's WebSocket and the provider's, message by
 * message in both directions, text as text and binary as binary. It starts with the provider's
 * socket, as soon as that one is open, and holds what the provider sends until the client's
 * socket is attached (the gateway accepts the client only once the provider accepted it). A side
 * that falls behind pauses the other (backpressure). When one side closes, the other is closed
 * with the same code and reason where the protocol allows them to be sent: a peer that vanished
 * without a close frame (1006) becomes 1001 towards the provider ("going away") and 1014 towards
 * the client ("bad gateway"). `done` resolves once both sides are closed.
 */
export class RealtimeSession {
  readonly done: Promise<RealtimeSessionSummary>;
  private readonly summary: RealtimeSessionSummary = {
    messagesFromClient: 0,
    messagesFromUpstream: 0,
    bytesFromClient: 0,
    bytesFromUpstream: 0,
    responses: 0,
    usage: undefined,
    firstUpstreamMessageAt: null,
    closedBy: 'client',
    closeCode: 1005,
    closeReason: '',
  };
  private client: WebSocket | null = null;
  /** Provider messages that arrived before the client was attached, in order. */
  private held: { data: RawData; isBinary: boolean }[] = [];
  private upstreamClose: { code: number; reason: string } | null = null;
  private firstClose: 'client' | 'upstream' | 'gateway' | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private open = 2;
  private resolveDone!: (summary: RealtimeSessionSummary) => void;

  constructor(private readonly upstream: WebSocket) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    // Errors always end in a 'close' event, which is where the session ends; nothing to add here.
    upstream.on('error', () => undefined);
    upstream.on('message', (data, isBinary) => {
      this.summary.messagesFromUpstream += 1;
      this.summary.bytesFromUpstream += byteLength(data);
      this.summary.firstUpstreamMessageAt ??= performance.now();
      if (!isBinary) this.readUsage(data);
      if (this.client) this.forward(data, isBinary, upstream, this.client);
      else this.held.push({ data, isBinary });
    });
    upstream.once('close', (code, reason) => {
      this.upstreamClose = { code, reason: reason.toString() };
      if (this.client) this.onClose('upstream', code, reason.toString(), this.client);
      else this.noteFirstClose('upstream', code, reason.toString());
      this.closed();
    });
  }

  /** The client's socket, once accepted: what the provider sent meanwhile goes first. */
  attachClient(client: WebSocket): void {
    this.client = client;
    client.on('error', () => undefined);
    client.on('message', (data, isBinary) => {
      this.summary.messagesFromClient += 1;
      this.summary.bytesFromClient += byteLength(data);
      this.forward(data, isBinary, client, this.upstream);
    });
    client.once('close', (code, reason) => {
      this.onClose('client', code, reason.toString(), this.upstream);
      this.closed();
    });
    for (const { data, isBinary } of this.held) this.forward(data, isBinary, this.upstream, client);
    this.held = [];
    if (this.upstreamClose)
      this.onClose('upstream', this.upstreamClose.code, this.upstreamClose.reason, client);
  }

  /** The client never arrived (its handshake failed): the provider side is cut. */
  abandon(): void {
    if (this.client) return;
    this.held = [];
    this.upstream.terminate();
    this.closed();
  }

  /** The gateway ends the session (shutdown): both sides get the code. */
  close(code: number, reason: string): void {
    this.noteFirstClose('gateway', code, reason);
    if (this.client) this.closeSide(this.client, code, reason);
    this.closeSide(this.upstream, code, reason);
  }

  private closed(): void {
    this.open -= 1;
    if (this.open > 0) return;
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.resolveDone(this.summary);
  }

  private noteFirstClose(side: 'client' | 'upstream' | 'gateway', code: number, reason: string): void {
    if (this.firstClose !== null) return;
    this.firstClose = side;
    this.summary.closedBy = side;
    this.summary.closeCode = code;
    this.summary.closeReason = reason;
  }

  private forward(data: RawData, isBinary: boolean, from: WebSocket, to: WebSocket): void {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount < HIGH_WATER_BYTES / 2) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
  }

  private readUsage(data: RawData): void {
    const buffer = toBuffer(data);
    if (!buffer.includes(RESPONSE_DONE)) return;
    try {
      const event = JSON.parse(buffer.toString('utf8')) as { type?: string };
      if (event.type !== 'response.done') return;
      this.summary.responses += 1;
      this.summary.usage = addRealtimeUsage(this.summary.usage, event);
    } catch {
      // Not JSON: relayed as it is, nothing to count.
    }
  }

  private onClose(side: 'client' | 'upstream', code: number, reason: string, other: WebSocket): void {
    this.noteFirstClose(side, code, reason);
    if (other.readyState === WebSocket.CLOSED) return;
    if (isSendableCloseCode(code)) this.closeSide(other, code, reason);
    else if (code === 1005) this.closeSide(other, undefined, '');
    else if (side === 'client') this.closeSide(other, 1001, 'client went away');
    else this.closeSide(other, 1014, 'upstream connection lost');
  }

  private closeSide(socket: WebSocket, code: number | undefined, reason: string): void {
    if (socket.readyState === WebSocket.CLOSED) return;
    if (socket.readyState === WebSocket.CONNECTING) {
      socket.terminate();
      return;
    }
    if (socket.readyState === WebSocket.OPEN) {
      if (code === undefined) socket.close();
      else socket.close(code, truncateReason(reason));
    }
    // A peer that never answers the close frame is cut after a grace period.
    this.graceTimer ??= setTimeout(() => {
      this.client?.terminate();
      this.upstream.terminate();
    }, CLOSE_GRACE_MS);
    this.graceTimer.unref();
  }
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return Buffer.isBuffer(data) ? data.length : data.byteLength;
}
