/**
 * Anthropic translation, also used for Claude on Vertex AI and Bedrock: the request builder, the
 * answer translator and the stream translator are pure and take no adapter state.
 */
export { anthropicAdapter, ANTHROPIC_BASE_URL, ANTHROPIC_DEFAULT_VERSION } from './anthropic.adapter';
export {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  buildAnthropicMessagesBody,
  toAnthropicMessages,
  type AnthropicRequestOptions,
} from './anthropic-request.translate';
export {
  anthropicUsage,
  transformAnthropicMessage,
  type AnthropicResponseOptions,
} from './anthropic-response.translate';
export {
  AnthropicStreamHandler,
  createAnthropicStreamTranslator,
  createAnthropicUsageScanner,
  type AnthropicStreamOptions,
} from './anthropic-stream.translate';
