/**
 * Shapes of the shipped model catalog. All prices are US cents per unit, as in the source data
 * (Portkey-AI/models): per token for token rates, per call/second/image for the others.
 */

/** A node of the catalog's `calculate` tree: `sum`/`multiply` over operands, or a value reference. */
export type PricingExpression =
  | { readonly operation: 'sum' | 'multiply'; readonly operands: readonly PricingExpression[] }
  | { readonly value: string };

export interface PricingFormula {
  readonly request: PricingExpression;
  readonly response: PricingExpression;
}

/**
 * A set of prices. `units` holds the token-like rates (`request_token`, `response_token`,
 * `cache_read_input_token`, `request_audio_token`, `reasoning_token`, ...), `additionalUnits` the
 * catalog's `additional_units` (per web search, per 1h-cache-write token, ...), `image` a per-image
 * table by quality then size. A missing key means "not priced separately", never "free".
 */
export interface Rates {
  readonly units: Readonly<Record<string, number>>;
  readonly additionalUnits: Readonly<Record<string, number>>;
  readonly image: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** Prices that replace the base ones once the prompt is longer than `above` tokens. */
export interface ContextTier {
  readonly above: number;
  readonly rates: Rates;
}

/** An execution mode (batch, priority, flex) or a region: an overlay on the base rates. */
export interface PricingVariant {
  readonly rates: Rates;
  readonly tiers: readonly ContextTier[] | null;
}

export interface RegionPricing extends PricingVariant {
  readonly modes: Readonly<Record<string, PricingVariant>>;
}

export interface PricingMultiplier {
  /** Applies to every price unless a more specific key is set. */
  readonly default?: number | null;
  /** Keyed by rate name (`request_token`, `cache_read_input_token`, ...). */
  readonly [rate: string]: number | null | undefined;
}

export interface PricingAdjustments {
  readonly multiplier: PricingMultiplier | null;
  /** Absolute prices that win over every catalog layer (base, region, mode, tier). */
  readonly rates: Rates | null;
}

export interface ModelPricing {
  /** Catalog provider file and model id that matched, or the custom model's id. */
  readonly provider: string;
  readonly model: string;
  readonly source: 'catalog' | 'custom';
  readonly currency: 'USD';
  readonly rates: Rates;
  /** The model's formula, else its provider's; null means the built-in equivalent of OpenAI's. */
  readonly formula: PricingFormula | null;
  /** Per-call fees (cents), e.g. Perplexity's online models. */
  readonly fixed: { readonly request: number; readonly response: number };
  readonly tiers: readonly ContextTier[];
  readonly modes: Readonly<Record<string, PricingVariant>>;
  /** Keyed by single region name (the source's comma-separated keys are expanded). */
  readonly regions: Readonly<Record<string, RegionPricing>>;
  readonly adjustments: PricingAdjustments | null;
}

export interface CatalogParameter {
  readonly min?: number;
  readonly max?: number;
}

export interface CatalogModel {
  /** Catalog provider id (the file), not the caller's alias. */
  readonly provider: string;
  readonly id: string;
  /** `chat`, `text`, `embedding`, `image`, `audio`, `rerank`, ... or null when unknown. */
  readonly type: string | null;
  readonly supported: readonly string[];
  /** Numeric parameter bounds (provider defaults refined by the model); `max_tokens.max` is the output cap. */
  readonly params: Readonly<Record<string, CatalogParameter>>;
  /** Request parameters the model rejects (e.g. `temperature` on o-series models). */
  readonly removeParams: readonly string[];
  readonly priced: boolean;
}
