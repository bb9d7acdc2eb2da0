import type { Usage } from '../types';
import type { OpenAiFinishReason } from './finish-reason';
import { generateChatCompletionId, unixSeconds } from './ids';

/** Output shapes of the OpenAI chat API, limited to what adapters produce. */

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Provider-only content kept when strict OpenAI compliance is off (`content_blocks`). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  content_blocks?: ContentBlock[];
}

export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  logprobs: null;
  finish_reason: OpenAiFinishReason | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage?: Usage;
  system_fingerprint?: string;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

/** Streamed provider-only content: `index` is the block position in the final message. */
export interface ContentBlockDelta {
  index: number;
  delta: { text?: string; thinking?: string; signature?: string; data?: string };
}

export interface ChatCompletionDelta {
  role?: 'assistant';
  content?: string | null;
  tool_calls?: ToolCallDelta[];
  content_blocks?: ContentBlockDelta[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: ChatCompletionDelta;
    logprobs: null;
    finish_reason: OpenAiFinishReason | null;
  }>;
  usage?: Usage | null;
}

export interface ChatCompletionInput {
  id?: string;
  model: string;
  created?: number;
  content: string | null;
  toolCalls?: ToolCall[];
  contentBlocks?: ContentBlock[];
  finishReason: OpenAiFinishReason | null;
  usage?: Usage;
}

/** A single-choice chat.completion, the shape every translated provider answer takes. */
export function buildChatCompletion(input: ChatCompletionInput): ChatCompletion {
  const message: ChatCompletionMessage = { role: 'assistant', content: input.content };
  if (input.toolCalls && input.toolCalls.length > 0) message.tool_calls = input.toolCalls;
  if (input.contentBlocks && input.contentBlocks.length > 0) message.content_blocks = input.contentBlocks;
  const completion: ChatCompletion = {
    id: input.id ?? generateChatCompletionId(),
    object: 'chat.completion',
    created: input.created ?? unixSeconds(),
    model: input.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: input.finishReason }],
  };
  if (input.usage) completion.usage = input.usage;
  return completion;
}

/**
 * Builds the chunks of one streamed answer. The id, model and creation time are fixed at the
 * first upstream event and repeated on every chunk, as OpenAI does.
 */
export class ChatChunkFactory {
  id: string;
  model: string;
  readonly created: number;

  constructor(init: { id?: string; model?: string; created?: number } = {}) {
    this.id = init.id ?? generateChatCompletionId();
    this.model = init.model ?? '';
    this.created = init.created ?? unixSeconds();
  }

  chunk(delta: ChatCompletionDelta, finishReason: OpenAiFinishReason | null = null): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
  }

  /** The closing chunk of `stream_options.include_usage`: no choices, only usage. */
  usageChunk(usage: Usage): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [],
      usage,
    };
  }
}
