import type { ContentBlock, ToolCall } from '../shared/chat-completion';
import { GOOGLE_FINISH_REASONS, mapFinishReason, type OpenAiFinishReason } from '../shared/finish-reason';
import { generateChatCompletionId, generateToolCallId, unixSeconds } from '../shared/ids';
import { asArray, asNumber, asRecord, asString, type JsonObject } from '../shared/json';
import { buildUsage } from '../shared/usage';
import type { Usage } from '../types';

/** Translation of a Gemini `GenerateContentResponse` into an OpenAI chat.completion. */

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

export interface ChoiceLogprobs {
  content: Array<TokenLogprob & { top_logprobs: TokenLogprob[] }>;
  refusal: null;
}

export interface GeminiChoice {
  index: number;
  message: {
    role: 'assistant';
    content: string | null;
    refusal: null;
    tool_calls?: ToolCall[];
    content_blocks?: ContentBlock[];
  };
  logprobs: ChoiceLogprobs | null;
  finish_reason: OpenAiFinishReason | null;
}

export interface GeminiChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: GeminiChoice[];
  usage?: Usage;
}

/**
 * Gemini reports thoughts apart from candidates while OpenAI counts reasoning inside
 * completion_tokens; `promptTokenCount` already includes cached tokens, and tool-use prompt
 * tokens (e.g. search results) are billed as input.
 */
export function readGeminiUsage(metadata: unknown): Usage | undefined {
  const usage = asRecord(metadata);
  if (!usage) return undefined;
  const prompt = asNumber(usage.promptTokenCount);
  const candidates = asNumber(usage.candidatesTokenCount);
  if (prompt === undefined && candidates === undefined) return undefined;
  const cached = asNumber(usage.cachedContentTokenCount);
  const thoughts = asNumber(usage.thoughtsTokenCount);
  const toolPrompt = asNumber(usage.toolUsePromptTokenCount) ?? 0;
  return buildUsage({
    inputTokens: (prompt ?? 0) + toolPrompt - (cached ?? 0),
    cacheReadTokens: cached,
    outputTokens: (candidates ?? 0) + (thoughts ?? 0),
    reasoningTokens: thoughts,
  });
}

export interface TranslatedParts {
  text: string;
  thinking: string;
  toolCalls: ToolCall[];
  blocks: ContentBlock[];
}

/** Splits a candidate's parts into answer text, thoughts and function calls. */
export function translateParts(parts: unknown): TranslatedParts {
  const result: TranslatedParts = { text: '', thinking: '', toolCalls: [], blocks: [] };
  for (const item of asArray(parts) ?? []) {
    const part = asRecord(item);
    if (!part) continue;
    const text = asString(part.text);
    const call = asRecord(part.functionCall);
    if (call) {
      result.toolCalls.push({
        id: asString(call.id) ?? generateToolCallId(),
        type: 'function',
        function: { name: asString(call.name) ?? '', arguments: JSON.stringify(call.args ?? {}) },
      });
    } else if (text !== undefined && part.thought === true) {
      result.thinking += text;
      const signature = asString(part.thoughtSignature);
      result.blocks.push(
        signature ? { type: 'thinking', thinking: text, signature } : { type: 'thinking', thinking: text },
      );
    } else if (text !== undefined) {
      result.text += text;
      result.blocks.push({ type: 'text', text });
    }
  }
  return result;
}

/** A function call answers with `tool_calls` even though Gemini says STOP. */
export function candidateFinishReason(reason: unknown, hasToolCalls: boolean): OpenAiFinishReason | null {
  const mapped = mapFinishReason(GOOGLE_FINISH_REASONS, asString(reason));
  if (hasToolCalls && (mapped === 'stop' || mapped === null)) return mapped === null ? null : 'tool_calls';
  return mapped;
}

function tokenLogprob(candidate: unknown): TokenLogprob | undefined {
  const record = asRecord(candidate);
  const token = asString(record?.token);
  const logprob = asNumber(record?.logProbability);
  if (token === undefined || logprob === undefined) return undefined;
  return { token, logprob, bytes: Array.from(Buffer.from(token, 'utf8')) };
}

export function translateLogprobs(result: unknown): ChoiceLogprobs | null {
  const record = asRecord(result);
  const chosen = asArray(record?.chosenCandidates);
  if (!record || !chosen) return null;
  const top = asArray(record.topCandidates) ?? [];
  const content: ChoiceLogprobs['content'] = [];
  chosen.forEach((candidate, step) => {
    const entry = tokenLogprob(candidate);
    if (!entry) return;
    const alternatives = (asArray(asRecord(top[step])?.candidates) ?? [])
      .map(tokenLogprob)
      .filter((alternative): alternative is TokenLogprob => alternative !== undefined);
    content.push({ ...entry, top_logprobs: alternatives });
  });
  return { content, refusal: null };
}

export function completionId(body: JsonObject): string {
  const responseId = asString(body.responseId);
  return responseId ? `chatcmpl-${responseId}` : generateChatCompletionId();
}

export function transformGenerateContentResponse(
  body: unknown,
  requestedModel: string,
  strict: boolean,
): GeminiChatCompletion {
  const response = asRecord(body) ?? {};
  const candidates = asArray(response.candidates) ?? [];
  const choices: GeminiChoice[] = candidates.map((item, position) => {
    const candidate = asRecord(item) ?? {};
    const parts = translateParts(asRecord(candidate.content)?.parts);
    const hasThinking = parts.thinking.length > 0;
    const message: GeminiChoice['message'] = {
      role: 'assistant',
      content: parts.text.length > 0 || parts.toolCalls.length === 0 ? parts.text : null,
      refusal: null,
    };
    if (parts.toolCalls.length > 0) message.tool_calls = parts.toolCalls;
    if (!strict && hasThinking) message.content_blocks = parts.blocks;
    return {
      index: asNumber(candidate.index) ?? position,
      message,
      logprobs: translateLogprobs(candidate.logprobsResult),
      finish_reason: candidateFinishReason(candidate.finishReason, parts.toolCalls.length > 0) ?? 'stop',
    };
  });
  // A prompt blocked before generation has no candidates, only `promptFeedback.blockReason`.
  if (choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      logprobs: null,
      finish_reason: asRecord(response.promptFeedback)?.blockReason ? 'content_filter' : 'stop',
    });
  }
  const completion: GeminiChatCompletion = {
    id: completionId(response),
    object: 'chat.completion',
    created: unixSeconds(),
    model: asString(response.modelVersion) ?? requestedModel,
    choices,
  };
  const usage = readGeminiUsage(response.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}
