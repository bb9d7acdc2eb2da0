import type {
  ChatCompletionDelta,
  ChatCompletionChunk,
  ContentBlockDelta,
  ToolCallDelta,
} from '../shared/chat-completion';
import { ChatChunkFactory } from '../shared/chat-completion';
import { readProviderError } from '../shared/errors';
import type { OpenAiFinishReason } from '../shared/finish-reason';
import { generateToolCallId } from '../shared/ids';
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  isRecord,
  tryParseJson,
  type JsonObject,
} from '../shared/json';
import { SseParser } from '../shared/sse-parser';
import type { StreamTranslator, Usage } from '../types';
import { candidateFinishReason, readGeminiUsage } from './gemini-response.translate';

interface CandidateState {
  roleSent: boolean;
  toolCallCount: number;
  /** Position of the current provider-only content block, -1 before the first. */
  blockIndex: number;
  blockType: 'thinking' | 'text' | undefined;
  finished: boolean;
}

/**
 * Translates `streamGenerateContent?alt=sse`: every SSE event is a whole `GenerateContentResponse`
 * holding the next slice of each candidate, so each event maps to chunks on its own and nothing
 * but per-candidate counters is kept between events.
 */
export class GeminiStreamTranslator implements StreamTranslator {
  private readonly parser = new SseParser();
  private factory: ChatChunkFactory | undefined;
  private readonly candidates = new Map<number, CandidateState>();
  private lastUsage: Usage | undefined;

  constructor(
    private readonly requestedModel: string,
    private readonly strict: boolean,
    private readonly includeUsage: boolean,
  ) {}

  write(chunk: Uint8Array): object[] {
    return this.translateEvents(this.parser.feed(chunk).map((event) => event.data));
  }

  end(): object[] {
    const out = this.translateEvents(this.parser.end().map((event) => event.data));
    if (this.includeUsage && this.lastUsage) out.push(this.chunks().usageChunk(this.lastUsage));
    return out;
  }

  usage(): Usage | undefined {
    return this.lastUsage;
  }

  private translateEvents(payloads: string[]): object[] {
    const out: object[] = [];
    for (const payload of payloads) {
      if (payload.trim() === '' || payload === '[DONE]') continue;
      const parsed = tryParseJson(payload);
      const event = Array.isArray(parsed) ? parsed[0] : parsed;
      if (!isRecord(event)) continue;
      if (isRecord(event.error)) {
        const status = asNumber(event.error.code) ?? 500;
        out.push({ error: readProviderError(status, event) });
        continue;
      }
      this.translateEvent(event, out);
    }
    return out;
  }

  private chunks(event?: JsonObject): ChatChunkFactory {
    if (!this.factory) {
      const responseId = event ? asString(event.responseId) : undefined;
      this.factory = new ChatChunkFactory({
        id: responseId ? `chatcmpl-${responseId}` : undefined,
        model: (event ? asString(event.modelVersion) : undefined) ?? this.requestedModel,
      });
    }
    return this.factory;
  }

  private state(index: number): CandidateState {
    let state = this.candidates.get(index);
    if (!state) {
      state = { roleSent: false, toolCallCount: 0, blockIndex: -1, blockType: undefined, finished: false };
      this.candidates.set(index, state);
    }
    return state;
  }

  private chunk(
    index: number,
    delta: ChatCompletionDelta,
    finishReason: OpenAiFinishReason | null,
  ): ChatCompletionChunk {
    const chunk = this.chunks().chunk(delta, finishReason);
    chunk.choices[0].index = index;
    return chunk;
  }

  private translateEvent(event: JsonObject, out: object[]): void {
    this.chunks(event);
    const usage = readGeminiUsage(event.usageMetadata);
    if (usage) this.lastUsage = usage;

    const candidates = asArray(event.candidates) ?? [];
    if (candidates.length === 0 && asRecord(event.promptFeedback)?.blockReason) {
      const state = this.state(0);
      if (!state.finished) {
        state.finished = true;
        state.roleSent = true;
        out.push(this.chunk(0, { role: 'assistant', content: null }, 'content_filter'));
      }
      return;
    }

    candidates.forEach((item, position) => {
      const candidate = asRecord(item) ?? {};
      const index = asNumber(candidate.index) ?? position;
      const state = this.state(index);
      const delta = this.translateParts(state, asArray(asRecord(candidate.content)?.parts) ?? []);
      const hasPayload =
        delta.content !== undefined || delta.tool_calls !== undefined || delta.content_blocks !== undefined;
      if (!state.roleSent && (hasPayload || candidate.finishReason !== undefined)) {
        state.roleSent = true;
        const content = delta.content ?? (delta.tool_calls ? null : '');
        out.push(this.chunk(index, { role: 'assistant', ...delta, content }, null));
      } else if (hasPayload) {
        out.push(this.chunk(index, delta, null));
      }
      const finish = candidateFinishReason(candidate.finishReason, state.toolCallCount > 0);
      if (finish && !state.finished) {
        state.finished = true;
        out.push(this.chunk(index, {}, finish));
      }
    });
  }

  private translateParts(state: CandidateState, parts: unknown[]): ChatCompletionDelta {
    let content: string | undefined;
    const toolCalls: ToolCallDelta[] = [];
    const blocks: ContentBlockDelta[] = [];
    for (const item of parts) {
      const part = asRecord(item);
      if (!part) continue;
      const text = asString(part.text);
      const call = asRecord(part.functionCall);
      if (call) {
        // Gemini sends each function call whole, so name and arguments go out in one delta.
        toolCalls.push({
          index: state.toolCallCount++,
          id: asString(call.id) ?? generateToolCallId(),
          type: 'function',
          function: { name: asString(call.name) ?? '', arguments: JSON.stringify(call.args ?? {}) },
        });
      } else if (text !== undefined && part.thought === true) {
        if (this.strict) continue;
        blocks.push({ index: this.blockIndex(state, 'thinking'), delta: { thinking: text } });
      } else if (text !== undefined) {
        content = (content ?? '') + text;
        // Once thoughts were shown, the text is mirrored as a block so the block list stays complete.
        if (!this.strict && state.blockType !== undefined) {
          blocks.push({ index: this.blockIndex(state, 'text'), delta: { text } });
        }
      }
    }
    const delta: ChatCompletionDelta = {};
    if (content !== undefined) delta.content = content;
    if (toolCalls.length > 0) delta.tool_calls = toolCalls;
    if (blocks.length > 0) delta.content_blocks = blocks;
    return delta;
  }

  private blockIndex(state: CandidateState, type: 'thinking' | 'text'): number {
    if (state.blockType !== type) {
      state.blockType = type;
      state.blockIndex++;
    }
    return state.blockIndex;
  }
}
