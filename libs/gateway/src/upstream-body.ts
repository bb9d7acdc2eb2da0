import type { Dispatcher } from 'undici';
import { RelayTarget, drained } from './relay';

/**
 * Bytes an upstream body may hold before anyone reads it; past this the upstream is paused until a
 * reader comes, as a stream's high-water mark would. Reading the body whole lifts the pause.
 */
export const UNREAD_HIGH_WATER_BYTES = 64 * 1024;

/** The part of undici's dispatch controller a body needs: flow control, and ending the call. */
export type BodyController = Pick<Dispatcher.DispatchController, 'pause' | 'resume' | 'abort'>;

interface WholeReader {
  kind: 'whole';
  resolve: (body: Buffer) => void;
  reject: (error: Error) => void;
}

interface RelayReader {
  kind: 'relay';
  target: RelayTarget;
  onChunk: (chunk: Buffer) => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * An upstream answer's body, fed by the undici dispatch handler (UpstreamClient) chunk by chunk:
 * no stream, no async iterator, no promise per chunk. It is read once, either whole (`read`) or
 * chunk by chunk into a client (`relay`). Chunks that arrive before the reader (those that came in
 * the same packet as the headers) are kept and handed over first.
 */
export class UpstreamBody {
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private ended = false;
  private failure: Error | null = null;
  private reader: WholeReader | RelayReader | null = null;
  private claimed = false;
  /** Paused because nobody read the body yet and it passed UNREAD_HIGH_WATER_BYTES. */
  private pausedUnread = false;

  constructor(private readonly controller: BodyController) {}

  /** Whether the body has ended or failed: nothing more will come. */
  get finished(): boolean {
    return this.ended || this.failure !== null;
  }

  /** The whole body, once it has ended. Rejects with the call's error (an abort, a dropped connection). */
  read(): Promise<Buffer> {
    this.claim();
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(this.takeBuffered());
    return new Promise<Buffer>((resolve, reject) => {
      this.reader = { kind: 'whole', resolve, reject };
      this.resumeUnread();
    });
  }

  /**
   * Hands every chunk to `onChunk` as it arrives, in the tick it was read. `onChunk` answers whether
   * the client took the chunk without buffering it; when it did not, the upstream is paused until
   * the client drains (or closes). Resolves at the body's end. Rejects with the call's error, or
   * with what `onChunk` threw (the upstream call is then aborted with it).
   */
  relay(target: RelayTarget, onChunk: (chunk: Buffer) => boolean): Promise<void> {
    this.claim();
    return new Promise<void>((resolve, reject) => {
      const reader: RelayReader = { kind: 'relay', target, onChunk, resolve, reject };
      this.reader = reader;
      const waiting = this.chunks;
      this.chunks = [];
      this.bufferedBytes = 0;
      let flowing = true;
      for (const chunk of waiting) {
        if (!this.deliver(reader, chunk)) flowing = false;
        if (this.reader !== reader) return;
      }
      if (this.failure) return this.settle(this.failure);
      if (this.ended) return this.settle();
      if (flowing) {
        this.resumeUnread();
      } else {
        if (!this.pausedUnread) this.controller.pause();
        this.pausedUnread = false;
        this.waitForClient(reader);
      }
    });
  }

  /** Ends the call if it is still going: a body nobody will read must not hold its connection. */
  destroy(reason: Error): void {
    if (this.finished) return;
    this.controller.abort(reason);
  }

  /** From the handler: one chunk of the body. */
  push(chunk: Buffer): void {
    const reader = this.reader;
    if (reader?.kind === 'relay') {
      if (!this.deliver(reader, chunk) && this.reader === reader) {
        this.controller.pause();
        this.waitForClient(reader);
      }
      return;
    }
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    if (!reader && !this.pausedUnread && this.bufferedBytes > UNREAD_HIGH_WATER_BYTES) {
      this.pausedUnread = true;
      this.controller.pause();
    }
  }

  /** From the handler: the body is complete. */
  end(): void {
    if (this.finished) return;
    this.ended = true;
    const reader = this.reader;
    if (reader?.kind === 'whole') {
      this.reader = null;
      reader.resolve(this.takeBuffered());
    } else if (reader) {
      this.settle();
    }
  }

  /** From the handler: the call failed after its headers (an abort, a dropped connection, a timeout). */
  fail(error: Error): void {
    if (this.finished) return;
    this.failure = error;
    this.chunks = [];
    this.bufferedBytes = 0;
    if (this.reader) this.settle(error);
  }

  private claim(): void {
    if (this.claimed) throw new Error('An upstream body can be read only once');
    this.claimed = true;
  }

  /** Hands one chunk to the relay; false when the client is behind (or the relay ended). */
  private deliver(reader: RelayReader, chunk: Buffer): boolean {
    try {
      return reader.onChunk(chunk);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.settle(failure);
      if (!this.finished) {
        this.failure = failure;
        this.controller.abort(failure);
      }
      return false;
    }
  }

  private waitForClient(reader: RelayReader): void {
    void drained(reader.target).then(() => {
      if (this.reader === reader && !this.finished) this.controller.resume();
    });
  }

  private resumeUnread(): void {
    if (!this.pausedUnread) return;
    this.pausedUnread = false;
    this.controller.resume();
  }

  private takeBuffered(): Buffer {
    const chunks = this.chunks;
    this.chunks = [];
    this.bufferedBytes = 0;
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  }

  private settle(error?: Error): void {
    const reader = this.reader;
    if (!reader) return;
    this.reader = null;
    if (error) reader.reject(error);
    else if (reader.kind === 'relay') reader.resolve();
    else reader.resolve(this.takeBuffered());
  }
}
