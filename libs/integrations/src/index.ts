export * from './catalog';
export * from './integrations.module';
export {
  ProviderDirectory,
  checkModel,
  credentialsForModel,
  pricingFor,
  PROVIDERS_TOPIC,
  type DirectoryLookup,
  type ModelRules,
  type ProviderLimits,
  type ProviderPricing,
  type ProviderRefusal,
  type ProviderRefusalReason,
  type ResolvedProvider,
} from './provider-directory';
export { ModelDirectory, type OpenAiModel, type OpenAiModelList } from './model-directory';
export { ProviderTokens } from './provider-tokens';
export type { AzureDeployment } from './provider-settings';
export { maskSecret } from './masking';
