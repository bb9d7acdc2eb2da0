import {
  CatalogFormatError,
  resolvePricing,
  resolveRates,
  unknownFormulaReferences,
  type ModelPricing,
  type PricingMultiplier,
  type PricingOverride,
  type Rates,
} from './catalog';
import { IntegrationErrors } from './integrations.errors';

/** `pricing_adjustments` as stored (the reference's PricingAdjustments shape). */
export interface StoredPricingAdjustments {
  multiplier?: Record<string, unknown> | null;
}

/**
 * The reference's nested multiplier (`image.default`, `additional_units.{unit}`) flattened into
 * the cost function's keys (`image`, `additional_units.<unit>`).
 */
export function adjustmentsToOverride(
  adjustments: StoredPricingAdjustments | null | undefined,
): PricingOverride | null {
  const multiplier = adjustments?.multiplier;
  if (!multiplier) return null;
  const flat: Record<string, number | null> = {};
  for (const [key, value] of Object.entries(multiplier)) {
    if (key === 'image') {
      const inner = (value as { default?: number | null } | null)?.default;
      if (inner !== undefined && inner !== null) flat.image = inner;
    } else if (key === 'additional_units') {
      for (const [unit, factor] of Object.entries((value as Record<string, number | null> | null) ?? {})) {
        if (factor !== null && factor !== undefined) flat[`additional_units.${unit}`] = factor;
      }
    } else if (typeof value === 'number') {
      flat[key] = value;
    }
  }
  return Object.keys(flat).length > 0 ? { multiplier: flat as PricingMultiplier } : null;
}

/** A model's `pricing_config` as an override that replaces the catalog entry. */
export function pricingConfigToOverride(
  config: Record<string, unknown> | null | undefined,
): PricingOverride | null {
  if (!config) return null;
  return {
    pricingConfig: {
      pay_as_you_go: config.pay_as_you_go,
      calculate: config.calculate ?? undefined,
      currency: (config.currency as string | undefined) ?? 'USD',
    },
  };
}

/** Refuses a `pricing_config` the cost function could not use, naming the field. */
export function checkPricingConfig(config: Record<string, unknown>, param: string): void {
  try {
    const pricing = resolvePricing(null, pricingConfigToOverride(config), {
      provider: 'custom',
      model: 'check',
    });
    if (!pricing) throw new CatalogFormatError('no pricing');
    if (pricing.formula) {
      const unknown = [
        ...unknownFormulaReferences(pricing.formula.request),
        ...unknownFormulaReferences(pricing.formula.response),
      ];
      if (unknown.length > 0)
        throw new CatalogFormatError(`calculate reads unknown values ${unknown.join(', ')}`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw IntegrationErrors.invalidField(param, `is not a usable price list: ${message}`, 'isPricing');
  }
}

function priceMap(prices: Readonly<Record<string, number>>): Record<string, { price: number }> {
  return Object.fromEntries(Object.entries(prices).map(([key, price]) => [key, { price }]));
}

/** A rate set in the reference's `pay_as_you_go` shape (`{ "request_token": { "price": x } }`). */
export function toPayAsYouGo(rates: Rates): Record<string, unknown> {
  const result: Record<string, unknown> = priceMap(rates.units);
  if (Object.keys(rates.additionalUnits).length > 0)
    result.additional_units = priceMap(rates.additionalUnits);
  if (Object.keys(rates.image).length > 0) {
    result.image = Object.fromEntries(
      Object.entries(rates.image).map(([quality, sizes]) => [quality, priceMap(sizes)]),
    );
  }
  return result;
}

/**
 * The reference's ModelPricingConfig for a resolved pricing (adjustments applied): standard
 * prices, the formula, and our additions (per-call fees, execution modes, long-context tiers).
 */
export function toPricingResponse(pricing: ModelPricing) {
  const standard = resolveRates(pricing, 0);
  const modes = Object.fromEntries(
    Object.keys(pricing.modes).map((mode) => [
      mode,
      { pay_as_you_go: toPayAsYouGo(resolveRates(pricing, 0, { mode }).rates) },
    ]),
  );
  const tiers = pricing.tiers.map((tier) => ({
    above_input_tokens: tier.above,
    pay_as_you_go: toPayAsYouGo(resolveRates(pricing, tier.above + 1).rates),
  }));
  const fees = pricing.fixed.request + pricing.fixed.response;
  return {
    object: 'model-pricing' as const,
    provider: pricing.provider,
    model: pricing.model,
    source: pricing.source,
    adjusted: pricing.adjustments !== null,
    pay_as_you_go: toPayAsYouGo(standard.rates),
    calculate: pricing.formula,
    currency: pricing.currency,
    ...(fees > 0 ? { request_fee: { price: fees * standard.feeMultiplier } } : {}),
    ...(Object.keys(modes).length > 0 ? { modes } : {}),
    ...(tiers.length > 0 ? { context_tiers: tiers } : {}),
    regions: Object.keys(pricing.regions).sort(),
  };
}
