import type { StreamTranslator, Usage } from '../types';
import { ChatChunkFactory } from '../shared/chat-completion';
import { readProviderError } from '../shared/errors';
import { COHERE_FINISH_REASONS, mapFinishReason, OpenAiFinishReason } from '../shared/finish-reason';
import { asNumber, asRecord, asString, JsonObject, tryParseJson } from '../shared/json';
import { SseEvent } from '../shared/sse-parser';
import { createSseStreamTranslator, SseEventHandler } from '../shared/sse-translator';
import { cohereUsage } from './cohere.translate';

export interface CohereStreamOptions {
  model: string;
  includeUsage: boolean;
  strictOpenAiCompliance: boolean;
}

function messageDelta(data: JsonObject): JsonObject {
  return asRecord(asRecord(data.delta)?.message) ?? {};
}

/** Cohere v2 chat stream events as chat.completion.chunk objects. */
class CohereStreamHandler implements SseEventHandler {
  private readonly chunks: ChatChunkFactory;
  private readonly toolIndexByEventIndex = new Map<number, number>();
  private counters: Usage | undefined;
  private finishReason: OpenAiFinishReason | null = null;
  private started = false;
  private finished = false;

  constructor(private readonly options: CohereStreamOptions) {
    this.chunks = new ChatChunkFactory({ model: options.model });
  }

  onEvent(event: SseEvent, out: object[]): void {
    const data = asRecord(tryParseJson(event.data));
    if (!data) return;
    switch (asString(data.type) ?? event.event) {
      case 'message-start': {
        const id = asString(data.id);
        if (id) this.chunks.id = id;
        this.started = true;
        out.push(this.chunks.chunk({ role: 'assistant', content: '' }));
        break;
      }
      case 'content-delta': {
        const content = asRecord(messageDelta(data).content) ?? {};
        const text = asString(content.text);
        if (text) out.push(this.chunks.chunk({ content: text }));
        const thinking = asString(content.thinking);
        if (thinking && !this.options.strictOpenAiCompliance) {
          out.push(
            this.chunks.chunk({
              content_blocks: [{ index: asNumber(data.index) ?? 0, delta: { thinking } }],
            }),
          );
        }
        break;
      }
      case 'tool-call-start': {
        const call = asRecord(messageDelta(data).tool_calls) ?? {};
        const fn = asRecord(call.function) ?? {};
        const toolIndex = this.toolIndexByEventIndex.size;
        this.toolIndexByEventIndex.set(asNumber(data.index) ?? toolIndex, toolIndex);
        out.push(
          this.chunks.chunk({
            tool_calls: [
              {
                index: toolIndex,
                id: asString(call.id) ?? '',
                type: 'function',
                function: { name: asString(fn.name) ?? '', arguments: asString(fn.arguments) ?? '' },
              },
            ],
          }),
        );
        break;
      }
      case 'tool-call-delta': {
        const fn = asRecord(asRecord(messageDelta(data).tool_calls)?.function) ?? {};
        const args = asString(fn.arguments);
        const toolIndex = this.toolIndexByEventIndex.get(asNumber(data.index) ?? -1);
        if (args && toolIndex !== undefined) {
          out.push(this.chunks.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: args } }] }));
        }
        break;
      }
      case 'message-end': {
        const delta = asRecord(data.delta) ?? {};
        this.finishReason = mapFinishReason(COHERE_FINISH_REASONS, asString(delta.finish_reason));
        this.counters = cohereUsage(delta.usage) ?? this.counters;
        if (delta.error !== undefined && delta.error !== null) {
          out.push({
            error: readProviderError(500, { message: asString(delta.error) ?? 'Cohere stream failed' }),
          });
        }
        this.finish(out);
        break;
      }
      default:
        // content-start/end, tool-plan-delta, tool-call-end, citation events: nothing to forward.
        break;
    }
  }

  onEnd(out: object[]): void {
    if (this.started && !this.finished && this.finishReason !== null) this.finish(out);
  }

  usage(): Usage | undefined {
    return this.counters;
  }

  private finish(out: object[]): void {
    if (this.finished) return;
    this.finished = true;
    out.push(this.chunks.chunk({}, this.finishReason ?? 'stop'));
    if (this.options.includeUsage && this.counters) out.push(this.chunks.usageChunk(this.counters));
  }
}

export function createCohereStreamTranslator(options: CohereStreamOptions): StreamTranslator {
  return createSseStreamTranslator(new CohereStreamHandler(options));
}
