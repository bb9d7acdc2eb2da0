import type {
  CatalogParameter,
  ContextTier,
  ModelPricing,
  PricingExpression,
  PricingFormula,
  PricingVariant,
  Rates,
  RegionPricing,
} from './catalog.types';

/**
 * Narrowing from the JSON files (typed as unknown) to the catalog types. The shipped data is
 * generated, but the same parsers read operator-supplied custom pricing, so malformed input is
 * rejected with a message rather than trusted.
 */

export class CatalogFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogFormatError';
  }
}

export const EMPTY_RATES: Rates = Object.freeze({
  units: Object.freeze({}),
  additionalUnits: Object.freeze({}),
  image: Object.freeze({}),
});

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Accepts a bare number (derived data) or `{ price: number }` (the source's and the API's shape). */
function readPrice(value: unknown, where: string): number | undefined {
  const candidate = isRecord(value) ? value.price : value;
  if (candidate === undefined || candidate === null) return undefined;
  if (typeof candidate !== 'number' || !Number.isFinite(candidate) || candidate < 0) {
    throw new CatalogFormatError(`${where}: a price must be a non-negative number`);
  }
  return candidate;
}

function readPriceMap(value: unknown, where: string): Record<string, number> {
  const prices: Record<string, number> = {};
  if (value === undefined || value === null) return prices;
  if (!isRecord(value)) throw new CatalogFormatError(`${where}: expected an object`);
  for (const [key, entry] of Object.entries(value)) {
    const price = readPrice(entry, `${where}.${key}`);
    if (price !== undefined) prices[key] = price;
  }
  return prices;
}

/** Reads a rate set in either the flat derived shape or the source's `pay_as_you_go` shape. */
export function parseRates(value: unknown, where = 'rates'): Rates {
  if (value === undefined || value === null) return EMPTY_RATES;
  if (!isRecord(value)) throw new CatalogFormatError(`${where}: expected an object`);
  const units: Record<string, number> = {};
  let additionalUnits: Record<string, number> = {};
  const image: Record<string, Record<string, number>> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (key === 'additional_units') {
      additionalUnits = readPriceMap(entry, `${where}.additional_units`);
    } else if (key === 'image') {
      if (!isRecord(entry)) throw new CatalogFormatError(`${where}.image: expected an object`);
      for (const [quality, sizes] of Object.entries(entry)) {
        image[quality] = readPriceMap(sizes, `${where}.image.${quality}`);
      }
    } else {
      const price = readPrice(entry, `${where}.${key}`);
      if (price !== undefined) units[key] = price;
    }
  }
  return { units, additionalUnits, image };
}

/** Layers `over` on `under`, key by key within each of the three price maps. */
export function mergeRates(under: Rates, over: Rates): Rates {
  if (over === EMPTY_RATES) return under;
  const image: Record<string, Record<string, number>> = { ...under.image };
  for (const [quality, sizes] of Object.entries(over.image)) image[quality] = { ...image[quality], ...sizes };
  return {
    units: { ...under.units, ...over.units },
    additionalUnits: { ...under.additionalUnits, ...over.additionalUnits },
    image,
  };
}

const OPERATIONS = new Set(['sum', 'multiply']);

export function parseExpression(value: unknown, where: string): PricingExpression {
  if (!isRecord(value)) throw new CatalogFormatError(`${where}: expected an expression object`);
  if (typeof value.value === 'string') return { value: value.value };
  if (
    typeof value.operation === 'string' &&
    OPERATIONS.has(value.operation) &&
    Array.isArray(value.operands)
  ) {
    return {
      operation: value.operation as 'sum' | 'multiply',
      operands: value.operands.map((operand, index) =>
        parseExpression(operand, `${where}.operands[${index}]`),
      ),
    };
  }
  throw new CatalogFormatError(`${where}: unsupported expression ${JSON.stringify(value).slice(0, 80)}`);
}

export function parseFormula(value: unknown, where = 'calculate'): PricingFormula | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new CatalogFormatError(`${where}: expected an object`);
  return {
    request: parseExpression(value.request, `${where}.request`),
    response: parseExpression(value.response, `${where}.response`),
  };
}

function parseTiers(value: unknown, where: string): ContextTier[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new CatalogFormatError(`${where}: expected an array`);
  return value
    .map((tier, index) => {
      if (!isRecord(tier) || typeof tier.above !== 'number') {
        throw new CatalogFormatError(`${where}[${index}]: expected { above, rates }`);
      }
      return { above: tier.above, rates: parseRates(tier.rates, `${where}[${index}].rates`) };
    })
    .sort((a, b) => a.above - b.above);
}

function parseVariant(value: unknown, where: string): PricingVariant {
  if (!isRecord(value)) throw new CatalogFormatError(`${where}: expected an object`);
  return {
    rates: parseRates(value.rates, `${where}.rates`),
    tiers: parseTiers(value.tiers, `${where}.tiers`),
  };
}

function parseModes(value: unknown, where: string): Record<string, PricingVariant> {
  const modes: Record<string, PricingVariant> = {};
  if (!isRecord(value)) return modes;
  for (const [mode, variant] of Object.entries(value))
    modes[mode] = parseVariant(variant, `${where}.${mode}`);
  return modes;
}

/** Parses one derived `pricing` object; `providerFormula` applies when the model has none. */
export function parseModelPricing(
  provider: string,
  model: string,
  value: unknown,
  providerFormula: PricingFormula | null,
): ModelPricing {
  const where = `${provider}/${model}`;
  if (!isRecord(value)) throw new CatalogFormatError(`${where}: pricing must be an object`);
  const fixed = isRecord(value.fixed) ? value.fixed : {};
  const regions: Record<string, RegionPricing> = {};
  if (isRecord(value.regions)) {
    for (const [key, region] of Object.entries(value.regions)) {
      const variant = parseVariant(region, `${where}.regions.${key}`);
      const parsed: RegionPricing = {
        ...variant,
        modes: parseModes(isRecord(region) ? region.modes : undefined, `${where}.regions.${key}.modes`),
      };
      // The source groups regions that share prices under one comma-separated key.
      for (const name of key.split(',')) regions[name.trim()] = parsed;
    }
  }
  return {
    provider,
    model,
    source: 'catalog',
    currency: 'USD',
    rates: parseRates(value.rates, `${where}.rates`),
    formula: parseFormula(value.calculate, `${where}.calculate`) ?? providerFormula,
    fixed: {
      request: readPrice(fixed.request, `${where}.fixed.request`) ?? 0,
      response: readPrice(fixed.response, `${where}.fixed.response`) ?? 0,
    },
    tiers: parseTiers(value.tiers, `${where}.tiers`) ?? [],
    modes: parseModes(value.modes, `${where}.modes`),
    regions,
    adjustments: null,
  };
}

export function parseParameters(value: unknown): Record<string, CatalogParameter> {
  const params: Record<string, CatalogParameter> = {};
  if (!isRecord(value)) return params;
  for (const [key, bounds] of Object.entries(value)) {
    if (!isRecord(bounds)) continue;
    const parameter: { min?: number; max?: number } = {};
    if (typeof bounds.min === 'number') parameter.min = bounds.min;
    if (typeof bounds.max === 'number') parameter.max = bounds.max;
    params[key] = parameter;
  }
  return params;
}

export function parseStringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
