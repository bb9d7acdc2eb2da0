import { EMPTY_RATES, isRecord, mergeRates, parseFormula, parseRates } from './catalog-parser';
import type {
  ContextTier,
  ModelPricing,
  PricingExpression,
  PricingFormula,
  PricingMultiplier,
  Rates,
} from './catalog.types';
import {
  MAX_DEPTH,
  NUMERIC_LITERAL,
  evaluateExpression,
  referencedValues,
  type ExpressionProduct,
} from './pricing-expression';

/**
 * Usage of one call, in the OpenAI convention, which every provider adapter maps to:
 *
 * - `promptTokens` counts ALL input tokens: uncached text, cache reads, cache writes, audio and
 *   image input. (OpenAI: `prompt_tokens` includes `prompt_tokens_details.cached_tokens`; an
 *   Anthropic adapter adds `cache_read_input_tokens` and `cache_creation_input_tokens` to
 *   `input_tokens`.) The billable uncached input is prompt − cache reads − cache writes − input
 *   that has its own rate.
 * - `completionTokens` counts ALL output tokens, including `reasoningTokens` and audio/image
 *   output. Reasoning is billed once: at `reasoning_token` if the model prices it separately
 *   (Qwen thinking), otherwise as ordinary output.
 * - Every other token field is a subset of one of those two totals, never an addition to it.
 *
 * A subset is split off only when the model has a price for it; otherwise it stays in its parent
 * and is billed at the parent's rate (cache reads on a model without a cache price cost full
 * input; audio on a model without an audio price costs text rates). So nothing is dropped and
 * nothing is counted twice.
 */
export interface TokenUsage {
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  /** Cache reads (hits), text and audio; subset of promptTokens. */
  readonly cachedReadTokens?: number;
  /** Audio part of the cache reads; subset of cachedReadTokens and of promptAudioTokens. */
  readonly cachedReadAudioTokens?: number;
  /** Cache writes of every TTL (Anthropic `cache_creation_input_tokens`); subset of promptTokens. */
  readonly cacheWriteTokens?: number;
  /** The part of cacheWriteTokens written with a 1-hour TTL (priced at `cache_write_1h`). */
  readonly cacheWrite1hTokens?: number;
  readonly promptAudioTokens?: number;
  readonly promptImageTokens?: number;
  readonly completionAudioTokens?: number;
  readonly completionImageTokens?: number;
  readonly reasoningTokens?: number;
  /** Counted extras keyed like the catalog's `additional_units` (`web_search: 2`). */
  readonly additionalUnits?: Readonly<Record<string, number>>;
  /** Generated images, for models priced per image. */
  readonly images?: { readonly count: number; readonly quality?: string; readonly size?: string };
}

export interface CostOptions {
  /** `standard` (default), `batch`, `priority`, `flex`, ... Unknown modes fall back to standard. */
  readonly mode?: string;
  /** Provider region (`eu-west-1`, `us-east5`); unknown regions fall back to the base price. */
  readonly region?: string;
}

export interface CostLine {
  readonly component: string;
  readonly quantity: number;
  readonly unitPriceCents: number;
  readonly cents: number;
}

export interface CostBreakdown {
  readonly requestCents: number;
  readonly responseCents: number;
  /** Additional units (web search, ...), per-image prices counted outside the formula excluded. */
  readonly additionalCents: number;
  /** Per-call fees. */
  readonly fixedCents: number;
  readonly lines: readonly CostLine[];
  /** Quantities that were reported but have no price: the amount is a lower bound when non-empty. */
  readonly unpriced: readonly string[];
  readonly mode: string;
  readonly region: string | null;
  /** `above` of the context tier applied, null for base prices. */
  readonly contextTier: number | null;
}

export interface Cost {
  readonly currency: 'USD';
  /** US dollars. */
  readonly amount: number;
  /** US cents (the catalog's unit). */
  readonly cents: number;
  readonly breakdown: CostBreakdown;
}

/** Per-integration adjustments and custom model pricing, as configured on the control plane. */
export interface PricingOverride {
  /** `pricing_adjustments.multiplier`: 0.8 is a 20% discount; keys inherit from `default`. */
  readonly multiplier?: PricingMultiplier | null;
  /** Absolute prices (US cents per unit, flat or `{ price }` shape) replacing the catalog's. */
  readonly rates?: unknown;
  /** Fully custom pricing (custom or fine-tuned models): replaces the catalog entry entirely. */
  readonly pricingConfig?: CustomPricingConfig | null;
}

export interface CustomPricingConfig {
  readonly pay_as_you_go?: unknown;
  readonly calculate?: unknown;
  readonly currency?: string;
}

interface ResolvedRates {
  readonly rates: Rates;
  readonly mode: string;
  readonly region: string | null;
  readonly contextTier: number | null;
  readonly feeMultiplier: number;
}

const ROUNDING = 1e10;

function round(value: number): number {
  return Math.round(value * ROUNDING) / ROUNDING;
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function pickTier(tiers: readonly ContextTier[], promptTokens: number): ContextTier | null {
  let chosen: ContextTier | null = null;
  for (const tier of tiers) if (promptTokens > tier.above) chosen = tier;
  return chosen;
}

/** The first multiplier set among `keys`, else `default`, else 1 (missing or null inherits). */
function multiplierFor(multiplier: PricingMultiplier, keys: readonly string[]): number {
  for (const key of keys) {
    const value = multiplier[key];
    if (value !== undefined && value !== null) return value;
  }
  return multiplier.default ?? 1;
}

/**
 * Multiplier keys: rate names (`request_token`, ...) for token rates; `additional_units.<unit>`
 * (or the bare unit name) for per-unit charges; `image` for per-image prices. A 1h cache write
 * is a cache write: it follows `cache_write_input_token` unless set itself.
 */
function applyMultiplier(rates: Rates, multiplier: PricingMultiplier): Rates {
  const scale = (prices: Readonly<Record<string, number>>, keysOf: (key: string) => readonly string[]) => {
    const scaled: Record<string, number> = {};
    for (const [key, price] of Object.entries(prices))
      scaled[key] = price * multiplierFor(multiplier, keysOf(key));
    return scaled;
  };
  const image: Record<string, Record<string, number>> = {};
  const imageFactor = multiplierFor(multiplier, ['image']);
  for (const [quality, sizes] of Object.entries(rates.image)) {
    image[quality] = Object.fromEntries(
      Object.entries(sizes).map(([size, price]) => [size, price * imageFactor]),
    );
  }
  return {
    units: scale(rates.units, (key) => [key]),
    additionalUnits: scale(rates.additionalUnits, (key) =>
      key === 'cache_write_1h'
        ? [`additional_units.${key}`, key, 'cache_write_input_token']
        : [`additional_units.${key}`, key],
    ),
    image,
  };
}

/** The prices that apply to one call: base, then region, then mode, then context tier, then adjustments. */
export function resolveRates(
  pricing: ModelPricing,
  promptTokens: number,
  options: CostOptions = {},
): ResolvedRates {
  let rates = pricing.rates;
  let tiers = pricing.tiers;
  const region = options.region !== undefined ? pricing.regions[options.region] : undefined;
  if (region) {
    rates = mergeRates(rates, region.rates);
    if (region.tiers) tiers = region.tiers;
  }
  const requestedMode = options.mode ?? 'standard';
  const mode =
    requestedMode === 'standard' ? undefined : (region?.modes[requestedMode] ?? pricing.modes[requestedMode]);
  if (mode) {
    rates = mergeRates(rates, mode.rates);
    // A mode's own tiers replace the standard ones; standard long-context surcharges do not carry over.
    tiers = mode.tiers ?? [];
  }
  const tier = pickTier(tiers, promptTokens);
  if (tier) rates = mergeRates(rates, tier.rates);
  let feeMultiplier = 1;
  const adjustments = pricing.adjustments;
  if (adjustments?.multiplier) {
    rates = applyMultiplier(rates, adjustments.multiplier);
    feeMultiplier = adjustments.multiplier.default ?? 1;
  }
  if (adjustments?.rates) rates = mergeRates(rates, adjustments.rates);
  return {
    rates,
    mode: mode ? requestedMode : 'standard',
    region: region ? (options.region ?? null) : null,
    contextTier: tier ? tier.above : null,
    feeMultiplier,
  };
}

/** A rate key resolved for one bucket, or null when nothing prices it. */
type RateKey = string | null;

type Side = 'request' | 'response';

interface Bucket {
  readonly component: string;
  readonly side: Side;
  readonly quantity: number;
  readonly rateKey: RateKey;
}

/** Formula variable that stands for the tokens billed at a rate; rates without one are added beside the formula. */
const VARIABLE_BY_RATE: Readonly<Record<string, readonly string[]>> = {
  request_token: ['input_tokens'],
  request_text_token: ['input_tokens'],
  cache_read_input_token: ['cache_read_tokens'],
  cache_read_text_input_token: ['cache_read_tokens'],
  cached_text_input_token: ['cache_read_tokens'],
  cache_write_input_token: ['cache_write_tokens'],
  request_audio_token: ['audio_input_tokens', 'request_audio_tokens'],
  cache_read_audio_input_token: ['cache_read_audio_tokens'],
  response_token: ['output_tokens'],
  response_text_token: ['output_tokens'],
  response_audio_token: ['audio_output_tokens', 'response_audio_tokens'],
};

/** The source spells some rates two ways inside formulas (azure: `rates.cache_read_token`). */
const RATE_ALIASES: Readonly<Record<string, string>> = {
  cache_read_token: 'cache_read_input_token',
  cache_write_token: 'cache_write_input_token',
};

/** Breakdown names for rates that have no formula variable. */
const COMPONENT_BY_RATE: Readonly<Record<string, string>> = {
  reasoning_token: 'reasoning_tokens',
  request_image_token: 'image_input_tokens',
  response_image_token: 'image_output_tokens',
  'additional_units.image_token': 'image_output_tokens',
  'additional_units.cache_write_1h': 'cache_write_1h_tokens',
};

const KNOWN_VARIABLES = new Set(Object.values(VARIABLE_BY_RATE).flat());

function rateValue(rates: Rates, key: string): number | undefined {
  return key.startsWith('additional_units.')
    ? rates.additionalUnits[key.slice('additional_units.'.length)]
    : rates.units[key];
}

/** First key of the chain that the model prices, else `fallback`. */
function firstPriced(rates: Rates, keys: readonly string[], fallback: RateKey): RateKey {
  for (const key of keys) if (rateValue(rates, key) !== undefined) return key;
  return fallback;
}

/** The buckets usage is split into, in the order they are billed (see TokenUsage for the convention). */
const BUCKETS: readonly { readonly component: string; readonly side: Side }[] = [
  { component: 'input_tokens', side: 'request' },
  { component: 'cache_read_tokens', side: 'request' },
  { component: 'cache_read_audio_tokens', side: 'request' },
  { component: 'cache_write_tokens', side: 'request' },
  { component: 'cache_write_1h_tokens', side: 'request' },
  { component: 'audio_input_tokens', side: 'request' },
  { component: 'image_input_tokens', side: 'request' },
  { component: 'output_tokens', side: 'response' },
  { component: 'reasoning_tokens', side: 'response' },
  { component: 'audio_output_tokens', side: 'response' },
  { component: 'image_output_tokens', side: 'response' },
];

/** How many tokens fall in each of BUCKETS: subsets split off their parent, clamped, never negative. */
function bucketQuantities(usage: TokenUsage): number[] {
  const prompt = count(usage.promptTokens);
  const completion = count(usage.completionTokens);
  const cachedRead = Math.min(count(usage.cachedReadTokens), prompt);
  const cachedAudio = Math.min(
    count(usage.cachedReadAudioTokens),
    cachedRead,
    count(usage.promptAudioTokens),
  );
  const cachedText = cachedRead - cachedAudio;
  const writes = Math.min(count(usage.cacheWriteTokens), prompt - cachedRead);
  const writes1h = Math.min(count(usage.cacheWrite1hTokens), writes);
  let rest = prompt - cachedRead - writes;
  const audioIn = Math.min(Math.max(count(usage.promptAudioTokens) - cachedAudio, 0), rest);
  rest -= audioIn;
  const imageIn = Math.min(count(usage.promptImageTokens), rest);
  const textIn = rest - imageIn;

  const reasoning = Math.min(count(usage.reasoningTokens), completion);
  const audioOut = Math.min(count(usage.completionAudioTokens), completion - reasoning);
  const imageOut = Math.min(count(usage.completionImageTokens), completion - reasoning - audioOut);
  const textOut = completion - reasoning - audioOut - imageOut;
  return [
    textIn,
    cachedText,
    cachedAudio,
    writes - writes1h,
    writes1h,
    audioIn,
    imageIn,
    textOut,
    reasoning,
    audioOut,
    imageOut,
  ];
}

/**
 * The rate each of BUCKETS is billed at. It depends on the rates alone, and catalog rates are
 * shared immutable objects, so it is worked out once per rates object rather than once per call.
 */
const rateKeysByRates = new WeakMap<Rates, readonly RateKey[]>();

function bucketRateKeys(rates: Rates): readonly RateKey[] {
  let keys = rateKeysByRates.get(rates);
  if (keys) return keys;
  const input = firstPriced(rates, ['request_token', 'request_text_token'], null);
  const output = firstPriced(rates, ['response_token', 'response_text_token'], null);
  const audioInKey = firstPriced(rates, ['request_audio_token'], input);
  const write5mKey = firstPriced(rates, ['cache_write_input_token'], input);
  keys = [
    input,
    firstPriced(
      rates,
      ['cache_read_input_token', 'cache_read_text_input_token', 'cached_text_input_token'],
      input,
    ),
    firstPriced(rates, ['cache_read_audio_input_token'], audioInKey),
    write5mKey,
    firstPriced(rates, ['additional_units.cache_write_1h'], write5mKey),
    audioInKey,
    firstPriced(rates, ['request_image_token'], input),
    output,
    firstPriced(rates, ['reasoning_token'], output),
    firstPriced(rates, ['response_audio_token'], output),
    firstPriced(rates, ['response_image_token', 'additional_units.image_token'], output),
  ];
  rateKeysByRates.set(rates, keys);
  return keys;
}

/** Splits usage into buckets, each billed at exactly one rate (see TokenUsage for the convention). */
function bucketsOf(usage: TokenUsage, rates: Rates): Bucket[] {
  const quantities = bucketQuantities(usage);
  const keys = bucketRateKeys(rates);
  return BUCKETS.map(({ component, side }, index) => ({
    component,
    side,
    quantity: quantities[index],
    rateKey: keys[index],
  }));
}

/** Price of one generated image: exact quality and size, then each side's `default`. */
function imagePrice(rates: Rates, quality = 'default', size = 'default'): number | undefined {
  const table = rates.image;
  return table[quality]?.[size] ?? table[quality]?.default ?? table.default?.[size] ?? table.default?.default;
}

/**
 * The cost of one call, or null when the price is unknown (no pricing: never a zero that would
 * read as a real price). Amounts are rounded to 1e-10 cents to keep float noise out of logs.
 */
export function computeCost(
  pricing: ModelPricing | null | undefined,
  usage: TokenUsage,
  options: CostOptions = {},
): Cost | null {
  if (!pricing) return null;
  const resolved = resolveRates(pricing, count(usage.promptTokens), options);
  const { rates } = resolved;
  const lines: CostLine[] = [];
  const unpriced = new Set<string>();
  const addLine = (component: string, quantity: number, unitPriceCents: number, cents: number) => {
    if (quantity > 0 || cents > 0) lines.push({ component, quantity, unitPriceCents, cents: round(cents) });
  };

  // Tokens billed at the same rate are one quantity, which is what the formula's variables mean.
  const quantityByRate = new Map<string, { side: 'request' | 'response'; quantity: number }>();
  for (const bucket of bucketsOf(usage, rates)) {
    if (bucket.quantity <= 0) continue;
    if (bucket.rateKey === null) {
      unpriced.add(bucket.component);
      continue;
    }
    const entry = quantityByRate.get(bucket.rateKey) ?? { side: bucket.side, quantity: 0 };
    entry.quantity += bucket.quantity;
    quantityByRate.set(bucket.rateKey, entry);
  }

  const formula = pricing.formula;
  const referenced = new Set<string>();
  if (formula) {
    referencedValues(formula.request, referenced);
    referencedValues(formula.response, referenced);
  }
  const imageCount = usage.images ? count(usage.images.count) : 1;
  const variables = new Map<string, number>();
  for (const [rateKey, { quantity }] of quantityByRate) {
    for (const variable of VARIABLE_BY_RATE[rateKey] ?? []) variables.set(variable, quantity);
  }
  const resolve = (name: string): number | undefined => {
    if (name.startsWith('rates.')) {
      const key = name.slice('rates.'.length);
      if (key === 'image') {
        const price = imagePrice(rates, usage.images?.quality, usage.images?.size);
        if (price === undefined) unpriced.add('image');
        // The catalog's image formulas price one image (`1 × rates.image`); the count scales it.
        return (price ?? 0) * imageCount;
      }
      const rateKey = RATE_ALIASES[key] ?? key;
      return rates.units[rateKey] ?? rates.additionalUnits[rateKey] ?? 0;
    }
    if (KNOWN_VARIABLES.has(name)) return variables.get(name) ?? 0;
    return undefined;
  };

  let requestCents = 0;
  let responseCents = 0;
  if (formula) {
    const onProduct = (product: ExpressionProduct) => {
      if (product.rateName === 'image') {
        addLine('image', imageCount, imageCount > 0 ? product.rate / imageCount : 0, product.value);
      } else if (/^-?\d/.test(product.quantityName)) {
        addLine(product.rateName, product.quantity, product.rate, product.value);
      } else {
        addLine(product.quantityName, product.quantity, product.rate, product.value);
      }
    };
    try {
      requestCents = evaluateExpression(formula.request, resolve, onProduct);
      responseCents = evaluateExpression(formula.response, resolve, onProduct);
    } catch {
      // An unknown reference or a malformed custom formula: the price cannot be trusted.
      return null;
    }
  }

  // Quantities the formula does not mention (all of them without a formula) are billed beside it,
  // so a provider formula that predates cache or reasoning prices cannot drop those tokens.
  for (const [rateKey, { side, quantity }] of quantityByRate) {
    const variableNames = VARIABLE_BY_RATE[rateKey] ?? [];
    if (variableNames.some((variable) => referenced.has(variable))) continue;
    const rate = rateValue(rates, rateKey) ?? 0;
    const cents = quantity * rate;
    addLine(COMPONENT_BY_RATE[rateKey] ?? variableNames[0] ?? rateKey, quantity, rate, cents);
    if (side === 'request') requestCents += cents;
    else responseCents += cents;
  }
  // Quantities the formula mentions but the model has no price for (e.g. input on a rate-less entry).
  for (const [rateKey, { quantity }] of quantityByRate) {
    if (quantity > 0 && rateValue(rates, rateKey) === undefined) unpriced.add(rateKey);
  }

  let additionalCents = 0;
  for (const [unit, rawQuantity] of Object.entries(usage.additionalUnits ?? {})) {
    const quantity = count(rawQuantity);
    if (quantity === 0) continue;
    const rate = rates.additionalUnits[unit] ?? rates.units[unit];
    if (rate === undefined) {
      unpriced.add(unit);
      continue;
    }
    additionalCents += quantity * rate;
    addLine(unit, quantity, rate, quantity * rate);
  }

  const fixedCents = (pricing.fixed.request + pricing.fixed.response) * resolved.feeMultiplier;
  if (fixedCents > 0) addLine('request_fee', 1, fixedCents, fixedCents);

  const cents = round(requestCents + responseCents + additionalCents + fixedCents);
  return {
    currency: 'USD',
    amount: round(cents / 100),
    cents,
    breakdown: {
      requestCents: round(requestCents),
      responseCents: round(responseCents),
      additionalCents: round(additionalCents),
      fixedCents: round(fixedCents),
      lines,
      unpriced: [...unpriced].sort(),
      mode: resolved.mode,
      region: resolved.region,
      contextTier: resolved.contextTier,
    },
  };
}

/** A formula node with its leaves resolved once: what each reads does not depend on the call. */
type CompiledNode =
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'rate'; readonly key: string }
  | { readonly kind: 'image' }
  | { readonly kind: 'variable'; readonly name: string }
  | { readonly kind: 'sum' | 'multiply'; readonly operands: readonly CompiledNode[] };

interface CompiledFormula {
  readonly request: CompiledNode;
  readonly response: CompiledNode;
  readonly referenced: ReadonlySet<string>;
}

/** Null: the formula reads an unknown value or nests too deeply, so its price cannot be trusted. */
const compiledFormulas = new WeakMap<PricingFormula, CompiledFormula | null>();

/** Null where `evaluateExpression` would throw (the same names resolve, at the same depths). */
function compileNode(expression: PricingExpression, depth: number): CompiledNode | null {
  if (depth > MAX_DEPTH) return null;
  if ('value' in expression) {
    const name = expression.value;
    if (NUMERIC_LITERAL.test(name)) return { kind: 'number', value: Number(name) };
    if (name.startsWith('rates.')) {
      const key = name.slice('rates.'.length);
      return key === 'image' ? { kind: 'image' } : { kind: 'rate', key: RATE_ALIASES[key] ?? key };
    }
    return KNOWN_VARIABLES.has(name) ? { kind: 'variable', name } : null;
  }
  const operands: CompiledNode[] = [];
  for (const operand of expression.operands) {
    const compiled = compileNode(operand, depth + 1);
    if (!compiled) return null;
    operands.push(compiled);
  }
  return { kind: expression.operation, operands };
}

function compiledFormula(formula: PricingFormula): CompiledFormula | null {
  let compiled = compiledFormulas.get(formula);
  if (compiled !== undefined) return compiled;
  const request = compileNode(formula.request, 0);
  const response = request && compileNode(formula.response, 0);
  compiled = request && response ? { request, response, referenced: formulaReferences(formula) } : null;
  compiledFormulas.set(formula, compiled);
  return compiled;
}

function formulaReferences(formula: PricingFormula): Set<string> {
  const referenced = new Set<string>();
  referencedValues(formula.request, referenced);
  referencedValues(formula.response, referenced);
  return referenced;
}

/** What one call's formula reads: its rates, its quantities by rate, the price of its images. */
interface FormulaInputs {
  readonly rates: Rates;
  readonly rateKeys: readonly string[];
  readonly quantities: readonly number[];
  readonly imageCents: () => number;
}

/** Evaluates like `evaluateExpression`: operands left to right, sums from 0, products from 1. */
function evaluateCompiled(node: CompiledNode, inputs: FormulaInputs): number {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'rate':
      return inputs.rates.units[node.key] ?? inputs.rates.additionalUnits[node.key] ?? 0;
    case 'image':
      return inputs.imageCents();
    case 'variable': {
      // A later rate that stands for the same variable wins, as in computeCost's variable map.
      for (let index = inputs.rateKeys.length - 1; index >= 0; index--) {
        if (VARIABLE_BY_RATE[inputs.rateKeys[index]]?.includes(node.name)) return inputs.quantities[index];
      }
      return 0;
    }
    case 'sum': {
      let total = 0;
      for (const operand of node.operands) total += evaluateCompiled(operand, inputs);
      return total;
    }
    case 'multiply': {
      let total = 1;
      for (const operand of node.operands) total *= evaluateCompiled(operand, inputs);
      return total;
    }
  }
}

/**
 * `computeCost(...)?.amount ?? null`, without the breakdown: the log record and the budgets keep
 * only the amount, and building the lines was most of what pricing a call allocated. The same
 * arithmetic in the same order, so the two never differ (cost.spec.ts checks the whole catalog).
 */
export function computeCostAmount(
  pricing: ModelPricing | null | undefined,
  usage: TokenUsage,
  options: CostOptions = {},
): number | null {
  if (!pricing) return null;
  const resolved = resolveRates(pricing, count(usage.promptTokens), options);
  const { rates } = resolved;
  const formula = pricing.formula ? compiledFormula(pricing.formula) : null;
  if (pricing.formula && !formula) return null;

  // Tokens billed at the same rate are one quantity, in the order their rates first appear.
  const bucketQuantity = bucketQuantities(usage);
  const bucketKey = bucketRateKeys(rates);
  const rateKeys: string[] = [];
  const sides: Side[] = [];
  const quantities: number[] = [];
  for (let bucket = 0; bucket < BUCKETS.length; bucket++) {
    const rateKey = bucketKey[bucket];
    if (bucketQuantity[bucket] <= 0 || rateKey === null) continue;
    let index = rateKeys.indexOf(rateKey);
    if (index === -1) {
      index = rateKeys.push(rateKey) - 1;
      sides.push(BUCKETS[bucket].side);
      quantities.push(0);
    }
    quantities[index] += bucketQuantity[bucket];
  }

  let requestCents = 0;
  let responseCents = 0;
  if (formula) {
    const imageCount = usage.images ? count(usage.images.count) : 1;
    const inputs: FormulaInputs = {
      rates,
      rateKeys,
      quantities,
      imageCents: () => (imagePrice(rates, usage.images?.quality, usage.images?.size) ?? 0) * imageCount,
    };
    requestCents = evaluateCompiled(formula.request, inputs);
    responseCents = evaluateCompiled(formula.response, inputs);
  }
  for (let index = 0; index < rateKeys.length; index++) {
    const variableNames = VARIABLE_BY_RATE[rateKeys[index]] ?? [];
    if (formula && variableNames.some((variable) => formula.referenced.has(variable))) continue;
    const cents = quantities[index] * (rateValue(rates, rateKeys[index]) ?? 0);
    if (sides[index] === 'request') requestCents += cents;
    else responseCents += cents;
  }

  let additionalCents = 0;
  if (usage.additionalUnits) {
    for (const [unit, rawQuantity] of Object.entries(usage.additionalUnits)) {
      const quantity = count(rawQuantity);
      if (quantity === 0) continue;
      const rate = rates.additionalUnits[unit] ?? rates.units[unit];
      if (rate !== undefined) additionalCents += quantity * rate;
    }
  }
  const fixedCents = (pricing.fixed.request + pricing.fixed.response) * resolved.feeMultiplier;
  const cents = round(requestCents + responseCents + additionalCents + fixedCents);
  return round(cents / 100);
}

function validateMultiplier(multiplier: PricingMultiplier): PricingMultiplier {
  for (const [key, value] of Object.entries(multiplier)) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new RangeError(`pricing multiplier "${key}" must be a non-negative number`);
    }
  }
  return multiplier;
}

/**
 * Applies an integration's pricing to the catalog entry. Custom pricing replaces the entry (and
 * makes an unknown model priced); multipliers adjust catalog prices only, since a custom price is
 * already the operator's own figure; absolute rates win over everything.
 */
export function resolvePricing(
  base: ModelPricing | null,
  override: PricingOverride | null | undefined,
  identity: { readonly provider: string; readonly model: string } = {
    provider: base?.provider ?? 'custom',
    model: base?.model ?? 'custom',
  },
): ModelPricing | null {
  if (!override) return base;
  const rateOverride =
    override.rates === undefined || override.rates === null ? null : parseRates(override.rates);
  let pricing: ModelPricing | null = base;
  let multiplier = override.multiplier ? validateMultiplier(override.multiplier) : null;

  if (override.pricingConfig) {
    const config = override.pricingConfig;
    if (!isRecord(config)) throw new TypeError('pricingConfig must be an object');
    if (config.currency !== undefined && config.currency !== 'USD') {
      throw new RangeError(`pricing currency ${String(config.currency)} is not supported (USD only)`);
    }
    pricing = {
      provider: identity.provider,
      model: identity.model,
      source: 'custom',
      currency: 'USD',
      rates: parseRates(config.pay_as_you_go, 'pricingConfig.pay_as_you_go'),
      formula: parseFormula(config.calculate, 'pricingConfig.calculate'),
      fixed: { request: 0, response: 0 },
      tiers: [],
      modes: {},
      regions: {},
      adjustments: null,
    };
    multiplier = null;
  }
  if (!pricing) return null;
  if (!multiplier && !rateOverride) return pricing;
  return {
    ...pricing,
    adjustments: { multiplier, rates: rateOverride && rateOverride !== EMPTY_RATES ? rateOverride : null },
  };
}

/** Every value name a formula reads, for validating custom formulas before they are stored. */
export function unknownFormulaReferences(expression: PricingExpression): string[] {
  return [...referencedValues(expression)]
    .filter((name) => !name.startsWith('rates.') && !KNOWN_VARIABLES.has(name))
    .sort();
}

function field(source: unknown, key: string): number | undefined {
  if (!isRecord(source)) return undefined;
  const value = source[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Maps an OpenAI-shaped `usage` object (what every adapter emits) to TokenUsage. Accepts the
 * Responses API names too. `cache_creation_tokens` is this gateway's extension for Anthropic-style
 * cache writes, already counted in `prompt_tokens`.
 */
export function tokenUsageFromOpenAI(usage: unknown): TokenUsage | null {
  if (!isRecord(usage)) return null;
  const promptTokens = field(usage, 'prompt_tokens') ?? field(usage, 'input_tokens');
  const completionTokens = field(usage, 'completion_tokens') ?? field(usage, 'output_tokens');
  if (promptTokens === undefined && completionTokens === undefined) return null;
  const prompt = usage.prompt_tokens_details ?? usage.input_tokens_details;
  const completion = usage.completion_tokens_details ?? usage.output_tokens_details;
  return {
    promptTokens,
    completionTokens,
    cachedReadTokens: field(prompt, 'cached_tokens'),
    cacheWriteTokens: field(prompt, 'cache_creation_tokens'),
    promptAudioTokens: field(prompt, 'audio_tokens'),
    promptImageTokens: field(prompt, 'image_tokens'),
    reasoningTokens: field(completion, 'reasoning_tokens'),
    completionAudioTokens: field(completion, 'audio_tokens'),
    completionImageTokens: field(completion, 'image_tokens'),
  };
}
