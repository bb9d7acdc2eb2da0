/**
 * Derives the shipped model catalog (libs/integrations/src/catalog/data) from a checkout of the
 * public Portkey-AI/models data (MIT).
 *
 *   npx ts-node scripts/refresh-model-catalog.ts [source-dir]
 *
 * The source dir defaults to ../shared/data/model-catalog relative to the repo root. Output is
 * deterministic (sorted keys, stable arrays) so a refresh shows a clean diff.
 *
 * What is kept: every price the cost function needs (pay-as-you-go rates, additional units, image
 * price tables, per-request fixed fees, the `calculate` trees, batch/priority/flex execution modes,
 * regional prices and context-length tiers) and the model facts the gateway reads (type, supported
 * features, numeric parameter bounds, parameters a model rejects). What is dropped: playground-only
 * UI metadata (option lists, schemas, display names), fine-tuning training prices, and zero-valued
 * provider defaults (they would otherwise make "not priced separately" look like "free").
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const REPO_ROOT = resolve(__dirname, '..');
const OUT_DIR = join(REPO_ROOT, 'libs/integrations/src/catalog/data');
const SOURCE_REPO = 'https://github.com/Portkey-AI/models';

/** General files whose provider id differs from the pricing file they describe. */
const GENERAL_FILE_PROVIDER: Record<string, string> = {
  'open-ai': 'openai',
  fireworks: 'fireworks-ai',
  'nomic-ai': 'nomic',
};

/** Context tiers appear as sibling ids `<model>-lte-128k` / `<model>-gt-128k` (google, byteplus). */
const TIER_SUFFIX = /^(.+)-(lte|gt)-(\d+)k$/;

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readJson(path: string): Json {
  return JSON.parse(readFileSync(path, 'utf8')) as Json;
}

function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isObject(value)) return value;
  const sorted: JsonObject = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
  return sorted;
}

function price(value: Json | undefined): number | undefined {
  return isObject(value) && typeof value.price === 'number' ? value.price : undefined;
}

/**
 * `{ request_token: { price: 1 }, additional_units: { x: { price: 2 } }, image: { q: { s: { price } } } }`
 * becomes `{ request_token: 1, additional_units: { x: 2 }, image: { q: { s: 3 } } }`.
 */
function flattenRates(payAsYouGo: Json | undefined): JsonObject {
  const rates: JsonObject = {};
  if (!isObject(payAsYouGo)) return rates;
  for (const [key, value] of Object.entries(payAsYouGo)) {
    if (key === 'additional_units') {
      const units: JsonObject = {};
      if (isObject(value)) {
        for (const [unit, unitPrice] of Object.entries(value)) {
          const p = price(unitPrice);
          if (p !== undefined) units[unit] = p;
        }
      }
      if (Object.keys(units).length > 0) rates.additional_units = units;
    } else if (key === 'image') {
      const table: JsonObject = {};
      if (isObject(value)) {
        for (const [quality, sizes] of Object.entries(value)) {
          if (!isObject(sizes)) continue;
          const row: JsonObject = {};
          for (const [size, sizePrice] of Object.entries(sizes)) {
            const p = price(sizePrice);
            if (p !== undefined) row[size] = p;
          }
          if (Object.keys(row).length > 0) table[quality] = row;
        }
      }
      if (Object.keys(table).length > 0) rates.image = table;
    } else {
      const p = price(value);
      if (p !== undefined) rates[key] = p;
    }
  }
  return rates;
}

/** Nested merge for rate objects: `over` wins key by key, one level into `additional_units`/`image`. */
function mergeRates(under: JsonObject, over: JsonObject): JsonObject {
  const merged: JsonObject = { ...under };
  for (const [key, value] of Object.entries(over)) {
    const base = merged[key];
    merged[key] = isObject(base) && isObject(value) ? { ...base, ...value } : value;
  }
  return merged;
}

function withoutZeros(rates: JsonObject): JsonObject {
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(rates)) {
    if (typeof value === 'number') {
      if (value !== 0) kept[key] = value;
    } else if (isObject(value)) {
      const inner = withoutZeros(value);
      if (Object.keys(inner).length > 0) kept[key] = inner;
    }
  }
  return kept;
}

function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(sortKeys(a ?? null)) === JSON.stringify(sortKeys(b ?? null));
}

/** Keeps only the keys of `rates` that differ from `base`, so variants stay small. */
function diffRates(base: JsonObject, rates: JsonObject): JsonObject {
  const diff: JsonObject = {};
  for (const [key, value] of Object.entries(rates)) {
    if (!sameJson(base[key], value)) diff[key] = value;
  }
  return diff;
}

interface Variant {
  rates: JsonObject;
  tiers: Json[];
}

/** One execution mode of one region: its own rates (or its lowest context tier) plus higher tiers. */
function readVariant(mode: Json | undefined): Variant | undefined {
  if (!isObject(mode)) return undefined;
  const direct = isObject(mode.pricing_config) ? flattenRates(mode.pricing_config.pay_as_you_go) : undefined;
  const tierEntries = isObject(mode.context_tiers) ? Object.entries(mode.context_tiers) : [];
  return {
    rates: direct ?? {},
    tiers: tierEntries.map(([name, tier]) => ({ name, tier }) as unknown as Json),
  };
}

/** `{"0": "lte-200k", "200000": "gt-200k"}` → tier name → threshold (prompt tokens strictly above it). */
function tierThresholds(map: Json | undefined): Map<string, number> {
  const thresholds = new Map<string, number>();
  if (!isObject(map)) return thresholds;
  for (const [threshold, name] of Object.entries(map)) {
    if (typeof name === 'string') thresholds.set(name, Number(threshold));
  }
  return thresholds;
}

/**
 * Builds `{ rates, tiers? }` for one variant: the zero-threshold tier is the variant's base rates,
 * higher tiers become `{ above, rates }` overlays (stored as diffs against the variant's rates).
 */
function buildVariant(
  mode: Json | undefined,
  thresholds: Map<string, number>,
  inherited: JsonObject,
): JsonObject | undefined {
  const variant = readVariant(mode);
  if (!variant) return undefined;
  let rates = variant.rates;
  const overlays: { above: number; rates: JsonObject }[] = [];
  for (const entry of variant.tiers) {
    if (!isObject(entry) || typeof entry.name !== 'string' || !isObject(entry.tier)) continue;
    const tierRates = isObject(entry.tier.pricing_config)
      ? flattenRates(entry.tier.pricing_config.pay_as_you_go)
      : {};
    const above = thresholds.get(entry.name) ?? 0;
    if (above === 0) rates = mergeRates(rates, tierRates);
    else overlays.push({ above, rates: tierRates });
  }
  const full = mergeRates(inherited, rates);
  const result: JsonObject = { rates: diffRates(inherited, full) };
  overlays.sort((a, b) => a.above - b.above);
  const tiers = overlays
    .map((tier) => ({ above: tier.above, rates: diffRates(full, mergeRates(full, tier.rates)) }))
    .filter((tier) => Object.keys(tier.rates).length > 0);
  if (tiers.length > 0) result.tiers = tiers;
  return result;
}

function isEmptyVariant(variant: JsonObject | undefined): boolean {
  if (!variant) return true;
  return isObject(variant.rates) && Object.keys(variant.rates).length === 0 && variant.tiers === undefined;
}

/** Derives one model's pricing from its source entry, merged over the provider's non-zero defaults. */
function buildPricing(
  entry: JsonObject,
  defaults: JsonObject,
  defaultCalculate: Json | undefined,
): JsonObject {
  const config = isObject(entry.pricing_config) ? entry.pricing_config : {};
  const rates = mergeRates(defaults, flattenRates(config.pay_as_you_go));
  const pricing: JsonObject = { rates };

  if (config.calculate !== undefined && !sameJson(config.calculate, defaultCalculate)) {
    pricing.calculate = config.calculate;
  }
  if (isObject(config.fixed_cost)) {
    const fixed: JsonObject = {};
    const request = price(config.fixed_cost.request);
    const response = price(config.fixed_cost.response);
    if (request) fixed.request = request;
    if (response) fixed.response = response;
    if (Object.keys(fixed).length > 0) pricing.fixed = fixed;
  }

  const custom = isObject(entry.custom_pricing) ? entry.custom_pricing : {};
  const thresholds = tierThresholds(custom.context_tier_map);
  const regions = isObject(custom.regions) ? custom.regions : {};
  const modes: JsonObject = {};

  const defaultRegion = isObject(regions.default) ? regions.default : {};
  const defaultModes = isObject(defaultRegion.execution_modes) ? defaultRegion.execution_modes : {};
  // The default region's standard mode repeats pay_as_you_go (sometimes with rounding noise such as
  // 5.999999999999999e-05): pay_as_you_go stays the base, only its higher context tiers are taken.
  const standard = buildVariant(defaultModes.standard, thresholds, rates);
  if (standard && Array.isArray(standard.tiers)) pricing.tiers = standard.tiers;
  for (const [mode, value] of Object.entries(defaultModes)) {
    if (mode === 'standard') continue;
    const variant = buildVariant(value, thresholds, rates);
    if (variant && !isEmptyVariant(variant)) modes[mode] = variant;
  }
  if (modes.batch === undefined && isObject(config.batch_config)) {
    const batchRates = diffRates(rates, mergeRates(rates, flattenRates(config.batch_config)));
    if (Object.keys(batchRates).length > 0) modes.batch = { rates: batchRates };
  }
  if (Object.keys(modes).length > 0) pricing.modes = modes;

  const regional: JsonObject = {};
  for (const [region, value] of Object.entries(regions)) {
    if (region === 'default' || !isObject(value)) continue;
    const regionModes = isObject(value.execution_modes) ? value.execution_modes : {};
    const regionStandard = buildVariant(regionModes.standard, thresholds, rates) ?? { rates: {} };
    const regionRates = mergeRates(rates, isObject(regionStandard.rates) ? regionStandard.rates : {});
    const variant: JsonObject = { ...regionStandard };
    const otherModes: JsonObject = {};
    for (const [mode, modeValue] of Object.entries(regionModes)) {
      if (mode === 'standard') continue;
      const modeVariant = buildVariant(modeValue, thresholds, regionRates);
      if (!modeVariant || isEmptyVariant(modeVariant)) continue;
      // A region that repeats the default region's mode prices adds nothing: the resolver falls
      // back to the default region's mode.
      const regionHasOwnRates =
        isObject(regionStandard.rates) && Object.keys(regionStandard.rates).length > 0;
      if (!regionHasOwnRates && sameJson(modeVariant, modes[mode])) continue;
      otherModes[mode] = modeVariant;
    }
    if (Object.keys(otherModes).length > 0) variant.modes = otherModes;
    if (!isEmptyVariant(variant) || variant.modes !== undefined) regional[region] = variant;
  }
  if (Object.keys(regional).length > 0) pricing.regions = regional;
  return pricing;
}

/**
 * Folds `<id>-lte-Nk` / `<id>-gt-Nk` siblings into `<id>` with a context tier above N*1000 prompt
 * tokens. An exact `<id>` entry keeps its own base rates; otherwise the lte sibling provides them.
 */
function foldSuffixTiers(models: Record<string, JsonObject>): Record<string, JsonObject> {
  const groups = new Map<string, { lte?: JsonObject; gt: { above: number; pricing: JsonObject }[] }>();
  const result: Record<string, JsonObject> = {};
  for (const [id, pricing] of Object.entries(models)) {
    const match = TIER_SUFFIX.exec(id);
    if (!match) {
      result[id] = pricing;
      continue;
    }
    const [, base, kind, size] = match;
    const group = groups.get(base) ?? { gt: [] };
    if (kind === 'lte') group.lte = pricing;
    else group.gt.push({ above: Number(size) * 1000, pricing });
    groups.set(base, group);
  }
  for (const [base, group] of groups) {
    const basePricing = models[base] ?? group.lte ?? group.gt[0]?.pricing;
    if (!basePricing) continue;
    const baseRates = isObject(basePricing.rates) ? basePricing.rates : {};
    const tiers = group.gt
      .sort((a, b) => a.above - b.above)
      .map((tier) => ({
        above: tier.above,
        rates: diffRates(baseRates, isObject(tier.pricing.rates) ? tier.pricing.rates : {}),
      }))
      .filter((tier) => Object.keys(tier.rates).length > 0);
    const merged: JsonObject = { ...basePricing };
    if (tiers.length > 0) merged.tiers = tiers;
    result[base] = merged;
  }
  return result;
}

interface ModelInfo {
  type?: string;
  supported?: string[];
  params?: JsonObject;
  removeParams?: string[];
}

/**
 * Keeps each parameter's numeric bounds (`max_tokens` max is the model's output cap). Playground
 * defaults and option lists are UI choices, not facts about the model, so they are dropped.
 */
function readParams(params: Json | undefined): JsonObject {
  const result: JsonObject = {};
  if (!Array.isArray(params)) return result;
  for (const param of params) {
    if (!isObject(param) || typeof param.key !== 'string') continue;
    const bounds: JsonObject = {};
    if (typeof param.minValue === 'number') bounds.min = param.minValue;
    if (typeof param.maxValue === 'number') bounds.max = param.maxValue;
    if (Object.keys(bounds).length > 0) result[param.key] = bounds;
  }
  return result;
}

/** Model facts; `params` holds only this model's refinements of the provider's default params. */
function readModelInfo(entry: Json | undefined): ModelInfo {
  const info: ModelInfo = {};
  if (!isObject(entry)) return info;
  if (typeof entry.type === 'string') info.type = entry.type;
  else if (isObject(entry.type)) {
    if (typeof entry.type.primary === 'string') info.type = entry.type.primary;
    if (Array.isArray(entry.type.supported)) {
      const supported = entry.type.supported.filter((item): item is string => typeof item === 'string');
      if (supported.length > 0) info.supported = [...new Set(supported)].sort();
    }
  }
  const params = readParams(entry.params);
  if (Object.keys(params).length > 0) info.params = params;
  const removed = Array.isArray(entry.removeParams)
    ? entry.removeParams.filter((item): item is string => typeof item === 'string')
    : [];
  if (removed.length > 0) info.removeParams = [...new Set(removed)].sort();
  return info;
}

function listJson(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith('.json'))
        .sort()
    : [];
}

function main(): void {
  const sourceDir = resolve(REPO_ROOT, process.argv[2] ?? '../shared/data/model-catalog');
  const pricingDir = join(sourceDir, 'pricing');
  const generalDir = join(sourceDir, 'general');
  if (!existsSync(pricingDir)) throw new Error(`no pricing/ under ${sourceDir}`);

  const providers = new Map<
    string,
    { pricing: Record<string, JsonObject>; info: Record<string, ModelInfo>; params?: JsonObject }
  >();
  const provider = (id: string) => {
    let entry = providers.get(id);
    if (!entry) {
      entry = { pricing: {}, info: {} };
      providers.set(id, entry);
    }
    return entry;
  };
  const calculates = new Map<string, Json>();

  for (const file of listJson(pricingDir)) {
    const id = basename(file, '.json');
    const source = readJson(join(pricingDir, file));
    if (!isObject(source)) continue;
    const defaultConfig =
      isObject(source.default) && isObject(source.default.pricing_config)
        ? source.default.pricing_config
        : {};
    if (defaultConfig.calculate !== undefined) calculates.set(id, defaultConfig.calculate);
    if (defaultConfig.currency !== undefined && defaultConfig.currency !== 'USD') {
      throw new Error(`${file}: currency ${JSON.stringify(defaultConfig.currency)} is not supported`);
    }
    const defaults = withoutZeros(flattenRates(defaultConfig.pay_as_you_go));
    const models: Record<string, JsonObject> = {};
    for (const [model, entry] of Object.entries(source)) {
      if (model === 'default' || !isObject(entry)) continue;
      models[model] = buildPricing(entry, defaults, defaultConfig.calculate);
      // The source nests one model inside another's entry (azure-ai dall-e-2 holds gpt-image-1);
      // lift such strays out instead of losing them, unless the provider prices them itself.
      for (const [key, nested] of Object.entries(entry)) {
        if (key === 'pricing_config' || key === 'custom_pricing' || !isObject(nested)) continue;
        if (isObject(nested.pricing_config) && source[key] === undefined && models[key] === undefined) {
          models[key] = buildPricing(nested, defaults, defaultConfig.calculate);
        }
      }
    }
    provider(id).pricing = foldSuffixTiers(models);
  }

  for (const file of listJson(generalDir)) {
    const fileId = basename(file, '.json');
    const id = GENERAL_FILE_PROVIDER[fileId] ?? fileId;
    const source = readJson(join(generalDir, file));
    if (!isObject(source)) continue;
    const target = provider(id);
    if (target.params === undefined)
      target.params = readParams(isObject(source.default) ? source.default.params : undefined);
    for (const [model, entry] of Object.entries(source)) {
      if (model === 'default' || model === 'name' || model === 'description' || !isObject(entry)) continue;
      // Duplicated provider files (openai / open-ai): the first file read (sorted) wins per model.
      if (target.info[model] === undefined) target.info[model] = readModelInfo(entry);
    }
  }

  if (existsSync(OUT_DIR)) {
    for (const file of readdirSync(OUT_DIR)) {
      if (file.endsWith('.json')) rmSync(join(OUT_DIR, file));
    }
  }
  mkdirSync(OUT_DIR, { recursive: true });

  const index: JsonObject = {};
  let totalBytes = 0;
  for (const id of [...providers.keys()].sort()) {
    const { pricing, info, params } = providers.get(id)!;
    const models: JsonObject = {};
    for (const model of new Set([...Object.keys(pricing), ...Object.keys(info)])) {
      const entry: JsonObject = { ...(info[model] as unknown as JsonObject) };
      if (pricing[model] !== undefined) entry.pricing = pricing[model];
      models[model] = entry;
    }
    const document: JsonObject = { provider: id, currency: 'USD', models };
    if (calculates.has(id)) document.calculate = calculates.get(id)!;
    if (params !== undefined && Object.keys(params).length > 0) document.params = params;
    const text = `${JSON.stringify(sortKeys(document))}\n`;
    writeFileSync(join(OUT_DIR, `${id}.json`), text);
    totalBytes += text.length;
    index[id] = { models: Object.keys(models).length, priced: Object.keys(pricing).length };
  }

  const commit = readSourceCommit(sourceDir);
  writeFileSync(join(OUT_DIR, 'LICENSE'), readFileSync(join(sourceDir, 'LICENSE'), 'utf8'));
  writeFileSync(join(OUT_DIR, 'ATTRIBUTION.md'), attribution(commit));
  process.stdout.write(
    `wrote ${providers.size} providers, ${(totalBytes / 1024).toFixed(0)} KiB to ${OUT_DIR}\n` +
      `${JSON.stringify(sortKeys(index))}\n`,
  );
}

function readSourceCommit(sourceDir: string): string {
  const sourceNote = join(sourceDir, 'SOURCE.md');
  const match = existsSync(sourceNote) ? /\b([0-9a-f]{40})\b/.exec(readFileSync(sourceNote, 'utf8')) : null;
  if (!match) throw new Error(`cannot find the source commit in ${sourceNote}`);
  return match[1];
}

function attribution(commit: string): string {
  return [
    '# Model catalog: attribution',
    '',
    `The JSON files in this folder are derived from the public repository ${SOURCE_REPO}`,
    `at commit ${commit}, published under the MIT licence (copied beside this file as \`LICENSE\`,`,
    'Copyright (c) 2025 Portkey.ai).',
    '',
    'They were produced by `scripts/refresh-model-catalog.ts`, which reshapes the source: prices are',
    'flattened from `{ "price": x }` to `x` (still US cents per unit), context-length siblings',
    '(`<model>-lte-128k` / `<model>-gt-128k`) are folded into one model with tiers, regional and',
    'execution-mode prices are stored as differences from the base rates, and playground-only UI',
    'metadata is dropped. Do not edit these files by hand; re-run the script.',
    '',
  ].join('\n');
}

main();
