export * from './catalog.types';
export { CatalogFormatError, parseFormula, parseRates } from './catalog-parser';
export {
  computeCost,
  computeCostAmount,
  resolvePricing,
  tokenUsageFromOpenAI,
  resolveRates,
  unknownFormulaReferences,
  type Cost,
  type CostBreakdown,
  type CostLine,
  type CostOptions,
  type CustomPricingConfig,
  type PricingOverride,
  type TokenUsage,
} from './cost';
export {
  DEFAULT_CATALOG_DIR,
  ModelCatalog,
  PROVIDER_ALIASES,
  getModelCatalog,
  getModelPricing,
  hasProvider,
  listModels,
  modelIdCandidates,
} from './model-catalog';
export { UnknownPricingReferenceError, evaluateExpression, referencedValues } from './pricing-expression';
