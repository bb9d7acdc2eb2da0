import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface EventStreamMessage {
  headers: Record<string, string>;
  body: Uint8Array;
}

/** The prelude is total length (4 bytes), headers length (4 bytes) and the prelude CRC (4 bytes). */
const PRELUDE_LENGTH = 12;

/**
 * Frames the AWS binary event stream (`application/vnd.amazon.eventstream`) incrementally.
 *
 * Network chunks do not align with messages: a chunk may end inside a prelude, hold several
 * messages, or both. Bytes are kept as a list of chunks and only joined once a whole message is
 * buffered, so each byte is copied a bounded number of times regardless of how it was split.
 */
export class EventStreamDecoder {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private pending: Uint8Array[] = [];
  private pendingLength = 0;

  write(chunk: Uint8Array): EventStreamMessage[] {
    if (chunk.byteLength > 0) {
      this.pending.push(chunk);
      this.pendingLength += chunk.byteLength;
    }
    const messages: EventStreamMessage[] = [];
    for (;;) {
      if (this.pendingLength < PRELUDE_LENGTH) return messages;
      const totalLength = this.peekTotalLength();
      if (totalLength < PRELUDE_LENGTH + 4) {
        throw new Error(`Malformed event stream frame: total length ${totalLength}`);
      }
      if (this.pendingLength < totalLength) return messages;
      messages.push(this.decode(this.take(totalLength)));
    }
  }

  /** Bytes left over when the upstream ended: a truncated frame. */
  remainder(): number {
    return this.pendingLength;
  }

  private decode(frame: Uint8Array): EventStreamMessage {
    // The codec verifies both CRCs, so a corrupted frame throws instead of yielding garbage.
    const message = this.codec.decode(frame);
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(message.headers)) {
      headers[name] = header.type === 'binary' ? toUtf8(header.value) : String(header.value);
    }
    return { headers, body: message.body };
  }

  private peekTotalLength(): number {
    const prelude = new Uint8Array(4);
    let filled = 0;
    for (const part of this.pending) {
      const needed = 4 - filled;
      prelude.set(part.subarray(0, needed), filled);
      filled += Math.min(needed, part.byteLength);
      if (filled === 4) break;
    }
    return new DataView(prelude.buffer).getUint32(0, false);
  }

  private take(length: number): Uint8Array {
    const frame = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const head = this.pending[0];
      const needed = length - filled;
      if (head.byteLength <= needed) {
        frame.set(head, filled);
        filled += head.byteLength;
        this.pending.shift();
      } else {
        frame.set(head.subarray(0, needed), filled);
        filled += needed;
        this.pending[0] = head.subarray(needed);
      }
    }
    this.pendingLength -= length;
    return frame;
  }
}
