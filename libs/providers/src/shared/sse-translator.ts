import type { StreamTranslator, Usage } from '../types';
import { SseEvent, SseParser } from './sse-parser';

/** The provider-specific half of an SSE stream translator. */
export interface SseEventHandler {
  /** Appends the OpenAI chunks produced by one upstream event to `out`. */
  onEvent(event: SseEvent, out: object[]): void;
  /** The upstream ended: append closing chunks (finish, usage) not emitted yet. */
  onEnd(out: object[]): void;
  usage(): Usage | undefined;
}

/** Joins the incremental SSE parser and a per-event handler into a `StreamTranslator`. */
export function createSseStreamTranslator(handler: SseEventHandler): StreamTranslator {
  const parser = new SseParser();
  return {
    write(chunk: Uint8Array): object[] {
      const out: object[] = [];
      for (const event of parser.feed(chunk)) handler.onEvent(event, out);
      return out;
    },
    end(): object[] {
      const out: object[] = [];
      for (const event of parser.end()) handler.onEvent(event, out);
      handler.onEnd(out);
      return out;
    },
    usage: () => handler.usage(),
  };
}
