/** OpenAI finish reasons a chat choice may carry. */
export type OpenAiFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export type FinishReasonMap = Readonly<Record<string, OpenAiFinishReason>>;

/**
 * Maps a provider stop reason through `map`. A reason the map does not know becomes `fallback`
 * (default `stop`) so clients that switch on the OpenAI set never see a foreign value; a missing
 * reason stays null (the answer is still open, e.g. a mid-stream chunk).
 */
export function mapFinishReason(
  map: FinishReasonMap,
  reason: string | null | undefined,
  fallback: OpenAiFinishReason = 'stop',
): OpenAiFinishReason | null {
  if (reason === null || reason === undefined || reason === '') return null;
  return Object.prototype.hasOwnProperty.call(map, reason) ? map[reason] : fallback;
}

export const ANTHROPIC_FINISH_REASONS: FinishReasonMap = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export const COHERE_FINISH_REASONS: FinishReasonMap = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'stop',
  TIMEOUT: 'stop',
};

/** Gemini / Vertex `finishReason` values. */
export const GOOGLE_FINISH_REASONS: FinishReasonMap = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  LANGUAGE: 'stop',
  OTHER: 'stop',
  MALFORMED_FUNCTION_CALL: 'stop',
  UNEXPECTED_TOOL_CALL: 'stop',
  FINISH_REASON_UNSPECIFIED: 'stop',
};

/** Bedrock Converse `stopReason` values. */
export const BEDROCK_FINISH_REASONS: FinishReasonMap = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};
