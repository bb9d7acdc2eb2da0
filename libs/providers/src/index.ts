/** Public surface of the provider adapter library: the contract, the registry, and the helpers the gateway needs. */
export * from './types';
export { getProviderAdapter, listProviderAdapters, listProviderIds } from './registry';

export { SseParser, type SseEvent } from './shared/sse-parser';
export {
  createOpenAiSseUsageScanner,
  extractOpenAiUsage,
  OpenAiSseUsageScanner,
  readOpenAiUsage,
  type StreamUsageScanner,
} from './shared/usage';
export { errorTypeForStatus, ProviderRequestError, readProviderError } from './shared/errors';
export { generateChatCompletionId, generateToolCallId } from './shared/ids';
export { MULTIPART_ROUTES } from './shared/http';

export {
  createOpenAiCompatibleAdapter,
  type OpenAiCompatibleProvider,
} from './openai-compatible/openai-compatible.adapter';
export { OPENAI_COMPATIBLE_PROVIDERS } from './openai-compatible/openai-compatible.providers';
export { ANTHROPIC_DEFAULT_VERSION } from './anthropic/anthropic.adapter';
export { AZURE_OPENAI_DEFAULT_API_VERSION } from './azure-openai/azure-openai.adapter';
