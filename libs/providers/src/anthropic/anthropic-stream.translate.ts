import type { StreamTranslator, Usage } from '../types';
import { ChatChunkFactory, ChatCompletionDelta } from '../shared/chat-completion';
import { readProviderError } from '../shared/errors';
import { ANTHROPIC_FINISH_REASONS, mapFinishReason, OpenAiFinishReason } from '../shared/finish-reason';
import { asNumber, asRecord, asString, JsonObject, tryParseJson } from '../shared/json';
import { SseEvent } from '../shared/sse-parser';
import { createSseStreamTranslator, SseEventHandler } from '../shared/sse-translator';
import { buildUsage } from '../shared/usage';

export interface AnthropicStreamOptions {
  includeUsage: boolean;
  /** When false, thinking arrives as `delta.content_blocks`. */
  strictOpenAiCompliance: boolean;
}

/** Token counters of a streamed message; message_delta counters are cumulative and win. */
class StreamUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheCreation?: number;

  absorb(value: unknown): void {
    const usage = asRecord(value);
    if (!usage) return;
    this.input = asNumber(usage.input_tokens) ?? this.input;
    this.output = asNumber(usage.output_tokens) ?? this.output;
    this.cacheRead = asNumber(usage.cache_read_input_tokens) ?? this.cacheRead;
    this.cacheCreation = asNumber(usage.cache_creation_input_tokens) ?? this.cacheCreation;
  }

  toUsage(): Usage | undefined {
    if (this.input === undefined && this.output === undefined) return undefined;
    return buildUsage({
      inputTokens: this.input,
      outputTokens: this.output,
      cacheReadTokens: this.cacheRead,
      cacheCreationTokens: this.cacheCreation,
    });
  }
}

/**
 * Translates Anthropic Messages SSE events into chat.completion.chunk objects, one event at a
 * time. Tool-use blocks get consecutive `tool_calls` indexes in order of appearance, whatever
 * their content block index.
 */
export class AnthropicStreamHandler implements SseEventHandler {
  private readonly chunks = new ChatChunkFactory();
  private readonly counters = new StreamUsage();
  private readonly toolIndexByBlock = new Map<number, number>();
  private finishReason: OpenAiFinishReason | null = null;
  private started = false;
  private finished = false;

  constructor(private readonly options: AnthropicStreamOptions) {}

  onEvent(event: SseEvent, out: object[]): void {
    const data = asRecord(tryParseJson(event.data));
    if (!data) return;
    const type = asString(data.type) ?? event.event;
    switch (type) {
      case 'message_start':
        this.onMessageStart(asRecord(data.message) ?? {}, out);
        break;
      case 'content_block_start':
        this.onBlockStart(asNumber(data.index) ?? 0, asRecord(data.content_block) ?? {}, out);
        break;
      case 'content_block_delta':
        this.onBlockDelta(asNumber(data.index) ?? 0, asRecord(data.delta) ?? {}, out);
        break;
      case 'message_delta': {
        const delta = asRecord(data.delta);
        const reason = delta ? asString(delta.stop_reason) : undefined;
        if (reason) this.finishReason = mapFinishReason(ANTHROPIC_FINISH_REASONS, reason);
        this.counters.absorb(data.usage);
        break;
      }
      case 'message_stop':
        this.finish(out);
        break;
      case 'error':
        // The openai client raises on a chunk that carries `error`, as OpenAI streams do.
        out.push({ error: readProviderError(500, data) });
        break;
      default:
        // ping, content_block_stop and future event types carry nothing to forward.
        break;
    }
  }

  onEnd(out: object[]): void {
    if (this.started && !this.finished && this.finishReason !== null) this.finish(out);
  }

  usage(): Usage | undefined {
    return this.counters.toUsage();
  }

  private onMessageStart(message: JsonObject, out: object[]): void {
    const id = asString(message.id);
    if (id) this.chunks.id = id;
    const model = asString(message.model);
    if (model) this.chunks.model = model;
    this.counters.absorb(message.usage);
    this.started = true;
    out.push(this.chunks.chunk({ role: 'assistant', content: '' }));
  }

  private onBlockStart(index: number, block: JsonObject, out: object[]): void {
    switch (block.type) {
      case 'text': {
        const text = asString(block.text);
        if (text) out.push(this.chunks.chunk({ content: text }));
        break;
      }
      case 'tool_use': {
        const toolIndex = this.toolIndexByBlock.size;
        this.toolIndexByBlock.set(index, toolIndex);
        out.push(
          this.chunks.chunk({
            tool_calls: [
              {
                index: toolIndex,
                id: asString(block.id) ?? '',
                type: 'function',
                function: { name: asString(block.name) ?? '', arguments: '' },
              },
            ],
          }),
        );
        break;
      }
      case 'thinking': {
        const thinking = asString(block.thinking);
        if (thinking) this.pushBlockDelta(index, { thinking }, out);
        break;
      }
      case 'redacted_thinking': {
        const data = asString(block.data);
        if (data !== undefined) this.pushBlockDelta(index, { data }, out);
        break;
      }
      default:
        break;
    }
  }

  private onBlockDelta(index: number, delta: JsonObject, out: object[]): void {
    switch (delta.type) {
      case 'text_delta': {
        const text = asString(delta.text);
        if (text) out.push(this.chunks.chunk({ content: text }));
        break;
      }
      case 'input_json_delta': {
        const partial = asString(delta.partial_json);
        const toolIndex = this.toolIndexByBlock.get(index);
        if (partial && toolIndex !== undefined) {
          out.push(
            this.chunks.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: partial } }] }),
          );
        }
        break;
      }
      case 'thinking_delta': {
        const thinking = asString(delta.thinking);
        if (thinking) this.pushBlockDelta(index, { thinking }, out);
        break;
      }
      case 'signature_delta': {
        const signature = asString(delta.signature);
        if (signature) this.pushBlockDelta(index, { signature }, out);
        break;
      }
      default:
        break;
    }
  }

  private pushBlockDelta(
    index: number,
    delta: NonNullable<ChatCompletionDelta['content_blocks']>[number]['delta'],
    out: object[],
  ): void {
    if (this.options.strictOpenAiCompliance) return;
    out.push(this.chunks.chunk({ content_blocks: [{ index, delta }] }));
  }

  private finish(out: object[]): void {
    if (this.finished) return;
    this.finished = true;
    out.push(this.chunks.chunk({}, this.finishReason ?? 'stop'));
    const usage = this.counters.toUsage();
    if (this.options.includeUsage && usage) out.push(this.chunks.usageChunk(usage));
  }
}

export function createAnthropicStreamTranslator(options: AnthropicStreamOptions): StreamTranslator {
  return createSseStreamTranslator(new AnthropicStreamHandler(options));
}

/**
 * For the native `messages` route: the bytes go to the client untouched, this only reads the
 * token counters out of them.
 */
export function createAnthropicUsageScanner(): StreamTranslator {
  const counters = new StreamUsage();
  return createSseStreamTranslator({
    onEvent(event: SseEvent): void {
      // Only two event types carry usage; skip parsing the (many) content deltas.
      if (event.event !== undefined && event.event !== 'message_start' && event.event !== 'message_delta')
        return;
      const data = asRecord(tryParseJson(event.data));
      if (!data) return;
      if (data.type === 'message_start') counters.absorb(asRecord(data.message)?.usage);
      else if (data.type === 'message_delta') counters.absorb(data.usage);
    },
    onEnd(): void {},
    usage: () => counters.toUsage(),
  });
}
