import { ChatChunkFactory, type ChatCompletionDelta } from '../shared/chat-completion';
import { errorTypeForStatus } from '../shared/errors';
import { BEDROCK_FINISH_REASONS, mapFinishReason } from '../shared/finish-reason';
import { asNumber, asRecord, asString, tryParseJson, type JsonObject } from '../shared/json';
import type { ProviderError, StreamTranslator, Usage } from '../types';
import { EventStreamDecoder, type EventStreamMessage } from './event-stream.decoder';
import { readConverseUsage } from './converse-response.translate';

const textDecoder = new TextDecoder();

/** HTTP status Bedrock gives each streamed exception, for the OpenAI error type. */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  throttlingException: 429,
  validationException: 400,
  modelStreamErrorException: 424,
  modelTimeoutException: 408,
  serviceUnavailableException: 503,
  internalServerException: 500,
};

/**
 * Translates ConverseStream (AWS binary event stream) into chat.completion.chunk objects.
 *
 * Converse numbers content blocks across text, reasoning and tool use; OpenAI numbers tool calls on
 * their own. Only the map from block index to tool-call index is kept between events.
 */
export class ConverseStreamTranslator implements StreamTranslator {
  private readonly decoder = new EventStreamDecoder();
  private readonly chunks: ChatChunkFactory;
  private readonly toolIndexByBlock = new Map<number, number>();
  private roleSent = false;
  private lastUsage: Usage | undefined;
  /** Blocks seen as provider-only content, for the `content_blocks` index. */
  private readonly blockKinds = new Map<number, 'text' | 'thinking'>();

  constructor(
    model: string,
    private readonly strict: boolean,
    private readonly includeUsage: boolean,
  ) {
    this.chunks = new ChatChunkFactory({ model });
  }

  write(chunk: Uint8Array): object[] {
    const out: object[] = [];
    for (const message of this.decoder.write(chunk)) this.translate(message, out);
    return out;
  }

  end(): object[] {
    const out: object[] = [];
    if (this.decoder.remainder() > 0) {
      out.push({
        error: {
          message: 'The upstream event stream ended inside a frame',
          type: 'api_error',
          param: null,
          code: null,
        } satisfies ProviderError,
      });
    }
    if (this.includeUsage && this.lastUsage) out.push(this.chunks.usageChunk(this.lastUsage));
    return out;
  }

  usage(): Usage | undefined {
    return this.lastUsage;
  }

  private translate(message: EventStreamMessage, out: object[]): void {
    const messageType = message.headers[':message-type'];
    const payload = asRecord(tryParseJson(textDecoder.decode(message.body))) ?? {};
    if (messageType === 'exception' || messageType === 'error') {
      out.push({ error: this.streamError(message.headers, payload) });
      return;
    }
    if (messageType !== 'event') return;
    switch (message.headers[':event-type']) {
      case 'messageStart':
        this.sendRole(out);
        break;
      case 'contentBlockStart':
        this.onBlockStart(payload, out);
        break;
      case 'contentBlockDelta':
        this.onBlockDelta(payload, out);
        break;
      case 'messageStop': {
        const reason = mapFinishReason(BEDROCK_FINISH_REASONS, asString(payload.stopReason)) ?? 'stop';
        this.sendRole(out);
        out.push(this.chunks.chunk({}, reason));
        break;
      }
      case 'metadata': {
        const usage = readConverseUsage(payload.usage);
        if (usage) this.lastUsage = usage;
        break;
      }
      default:
        // contentBlockStop and future event types carry nothing OpenAI chunks express.
        break;
    }
  }

  private sendRole(out: object[]): void {
    if (this.roleSent) return;
    this.roleSent = true;
    out.push(this.chunks.chunk({ role: 'assistant', content: '' }));
  }

  private onBlockStart(payload: JsonObject, out: object[]): void {
    const toolUse = asRecord(asRecord(payload.start)?.toolUse);
    const blockIndex = asNumber(payload.contentBlockIndex);
    if (!toolUse || blockIndex === undefined) return;
    this.sendRole(out);
    const toolIndex = this.toolIndexByBlock.size;
    this.toolIndexByBlock.set(blockIndex, toolIndex);
    out.push(
      this.chunks.chunk({
        tool_calls: [
          {
            index: toolIndex,
            id: asString(toolUse.toolUseId) ?? '',
            type: 'function',
            function: { name: asString(toolUse.name) ?? '', arguments: '' },
          },
        ],
      }),
    );
  }

  private onBlockDelta(payload: JsonObject, out: object[]): void {
    const blockIndex = asNumber(payload.contentBlockIndex) ?? 0;
    const delta = asRecord(payload.delta);
    if (!delta) return;
    this.sendRole(out);
    const text = asString(delta.text);
    const toolUse = asRecord(delta.toolUse);
    const reasoning = asRecord(delta.reasoningContent);
    if (text !== undefined) {
      const chunkDelta: ChatCompletionDelta = { content: text };
      // Once reasoning was shown, text is mirrored as a block so the block list stays complete.
      if (!this.strict && this.blockKinds.size > 0) {
        this.blockKinds.set(blockIndex, 'text');
        chunkDelta.content_blocks = [{ index: blockIndex, delta: { text } }];
      }
      out.push(this.chunks.chunk(chunkDelta));
    } else if (toolUse) {
      const toolIndex = this.toolIndexByBlock.get(blockIndex);
      if (toolIndex === undefined) return;
      out.push(
        this.chunks.chunk({
          tool_calls: [{ index: toolIndex, function: { arguments: asString(toolUse.input) ?? '' } }],
        }),
      );
    } else if (reasoning && !this.strict) {
      this.blockKinds.set(blockIndex, 'thinking');
      const reasoningText = asString(reasoning.text);
      const signature = asString(reasoning.signature);
      const redacted = asString(reasoning.redactedContent);
      const blockDelta =
        reasoningText !== undefined
          ? { thinking: reasoningText }
          : signature !== undefined
            ? { signature }
            : redacted !== undefined
              ? { data: redacted }
              : undefined;
      if (blockDelta)
        out.push(this.chunks.chunk({ content_blocks: [{ index: blockIndex, delta: blockDelta }] }));
    }
  }

  private streamError(headers: Record<string, string>, payload: JsonObject): ProviderError {
    const exceptionType = headers[':exception-type'] ?? headers[':error-code'] ?? 'internalServerException';
    const message =
      asString(payload.message) ??
      asString(payload.Message) ??
      headers[':error-message'] ??
      'Bedrock stream failed';
    const status = EXCEPTION_STATUS[exceptionType] ?? asNumber(payload.originalStatusCode) ?? 500;
    return { message, type: errorTypeForStatus(status), param: null, code: exceptionType };
  }
}
