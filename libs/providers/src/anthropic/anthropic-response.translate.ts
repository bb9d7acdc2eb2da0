import type { Usage } from '../types';
import { buildChatCompletion, ChatCompletion, ContentBlock, ToolCall } from '../shared/chat-completion';
import { ANTHROPIC_FINISH_REASONS, mapFinishReason } from '../shared/finish-reason';
import { asArray, asNumber, asRecord, asString } from '../shared/json';
import { buildUsage } from '../shared/usage';

/**
 * Anthropic usage in the OpenAI shape. Anthropic's `input_tokens` excludes cache reads and writes;
 * OpenAI's `prompt_tokens` includes them, so they are added back.
 */
export function anthropicUsage(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  if (!usage) return undefined;
  const inputTokens = asNumber(usage.input_tokens);
  const outputTokens = asNumber(usage.output_tokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return buildUsage({
    inputTokens,
    outputTokens,
    cacheReadTokens: asNumber(usage.cache_read_input_tokens),
    cacheCreationTokens: asNumber(usage.cache_creation_input_tokens),
  });
}

export interface AnthropicResponseOptions {
  /** When false, thinking blocks are kept in `content_blocks`. */
  strictOpenAiCompliance: boolean;
}

/** An Anthropic Messages answer as an OpenAI chat.completion. */
export function transformAnthropicMessage(body: unknown, options: AnthropicResponseOptions): ChatCompletion {
  const message = asRecord(body) ?? {};
  let text = '';
  let sawText = false;
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];

  for (const item of asArray(message.content) ?? []) {
    const block = asRecord(item);
    if (!block) continue;
    switch (block.type) {
      case 'text': {
        const value = asString(block.text) ?? '';
        text += value;
        sawText = true;
        blocks.push({ type: 'text', text: value });
        break;
      }
      case 'tool_use':
        toolCalls.push({
          id: asString(block.id) ?? '',
          type: 'function',
          function: { name: asString(block.name) ?? '', arguments: JSON.stringify(block.input ?? {}) },
        });
        break;
      case 'thinking': {
        const thinking: ContentBlock = { type: 'thinking', thinking: asString(block.thinking) ?? '' };
        const signature = asString(block.signature);
        if (signature !== undefined) thinking.signature = signature;
        blocks.push(thinking);
        break;
      }
      case 'redacted_thinking':
        blocks.push({ type: 'redacted_thinking', data: asString(block.data) ?? '' });
        break;
      default:
        // Server tool blocks (web search results...) have no OpenAI counterpart.
        break;
    }
  }

  const hasThinking = blocks.some((block) => block.type !== 'text');
  return buildChatCompletion({
    id: asString(message.id),
    model: asString(message.model) ?? '',
    content: sawText ? text : toolCalls.length > 0 ? null : '',
    toolCalls,
    contentBlocks: !options.strictOpenAiCompliance && hasThinking ? blocks : undefined,
    finishReason: mapFinishReason(ANTHROPIC_FINISH_REASONS, asString(message.stop_reason)) ?? 'stop',
    usage: anthropicUsage(message.usage),
  });
}
