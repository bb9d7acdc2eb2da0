import type { StreamTranslator, Usage } from '../types';
import { tryParseJson } from '../shared/json';
import { SseParser } from '../shared/sse-parser';
import { extractOpenAiUsage } from '../shared/usage';

/**
 * Re-emits an OpenAI-shaped SSE stream as objects. The gateway forwards native streams as bytes
 * and never needs this; it exists so `createStreamTranslator` is total for native routes too
 * (e.g. a caller that must inspect chunks, such as an output guardrail).
 */
export function createOpenAiPassthroughTranslator(): StreamTranslator {
  const parser = new SseParser();
  let usage: Usage | undefined;
  const collect = (out: object[], data: string): void => {
    if (data === '[DONE]') return;
    const parsed = tryParseJson(data);
    if (typeof parsed !== 'object' || parsed === null) return;
    const found = extractOpenAiUsage(parsed);
    if (found) usage = found;
    out.push(parsed);
  };
  return {
    write(chunk: Uint8Array): object[] {
      const out: object[] = [];
      for (const event of parser.feed(chunk)) collect(out, event.data);
      return out;
    },
    end(): object[] {
      const out: object[] = [];
      for (const event of parser.end()) collect(out, event.data);
      return out;
    },
    usage: () => usage,
  };
}
