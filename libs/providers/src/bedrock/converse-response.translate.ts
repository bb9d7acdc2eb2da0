import {
  buildChatCompletion,
  type ChatCompletion,
  type ContentBlock,
  type ToolCall,
} from '../shared/chat-completion';
import { BEDROCK_FINISH_REASONS, mapFinishReason } from '../shared/finish-reason';
import { asArray, asNumber, asRecord, asString } from '../shared/json';
import { buildUsage } from '../shared/usage';
import type { Usage } from '../types';

/** Bedrock's `inputTokens` excludes cache reads and writes; OpenAI's prompt_tokens includes them. */
export function readConverseUsage(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  if (!usage) return undefined;
  const input = asNumber(usage.inputTokens);
  const output = asNumber(usage.outputTokens);
  if (input === undefined && output === undefined) return undefined;
  return buildUsage({
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: asNumber(usage.cacheReadInputTokens),
    cacheCreationTokens: asNumber(usage.cacheWriteInputTokens),
  });
}

export function transformConverseResponse(body: unknown, model: string, strict: boolean): ChatCompletion {
  const response = asRecord(body) ?? {};
  const message = asRecord(asRecord(response.output)?.message);
  let text = '';
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];
  let hasReasoning = false;
  for (const item of asArray(message?.content) ?? []) {
    const block = asRecord(item);
    if (!block) continue;
    const blockText = asString(block.text);
    const toolUse = asRecord(block.toolUse);
    const reasoning = asRecord(block.reasoningContent);
    if (blockText !== undefined) {
      text += blockText;
      blocks.push({ type: 'text', text: blockText });
    } else if (toolUse) {
      toolCalls.push({
        id: asString(toolUse.toolUseId) ?? '',
        type: 'function',
        function: { name: asString(toolUse.name) ?? '', arguments: JSON.stringify(toolUse.input ?? {}) },
      });
    } else if (reasoning) {
      hasReasoning = true;
      const reasoningText = asRecord(reasoning.reasoningText);
      const redacted = asString(reasoning.redactedContent);
      if (reasoningText) {
        const signature = asString(reasoningText.signature);
        const thinking = asString(reasoningText.text) ?? '';
        blocks.push(signature ? { type: 'thinking', thinking, signature } : { type: 'thinking', thinking });
      } else if (redacted !== undefined) {
        blocks.push({ type: 'redacted_thinking', data: redacted });
      }
    }
  }
  return buildChatCompletion({
    model,
    content: text.length > 0 || toolCalls.length === 0 ? text : null,
    toolCalls,
    contentBlocks: !strict && hasReasoning ? blocks : undefined,
    finishReason: mapFinishReason(BEDROCK_FINISH_REASONS, asString(response.stopReason)) ?? 'stop',
    usage: readConverseUsage(response.usage),
  });
}
