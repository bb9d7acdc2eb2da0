import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  CatalogFormatError,
  isRecord,
  parseFormula,
  parseModelPricing,
  parseParameters,
  parseStringList,
} from './catalog-parser';
import type { CatalogModel, CatalogParameter, ModelPricing, PricingFormula } from './catalog.types';

/**
 * Our provider ids (as sent in `x-gateway-provider`, lowercase) → catalog provider file.
 * Every catalog file id also maps to itself. Providers absent here and from the files have no
 * catalog: `hasProvider` is false and every lookup is null (cost unknown).
 *
 * | our id(s)                                              | catalog file  |
 * |--------------------------------------------------------|---------------|
 * | openai, open-ai                                        | openai        |
 * | azure-openai, azure                                    | azure-openai  |
 * | azure-ai, azure-ai-inference, azure-foundry            | azure-ai      |
 * | google, gemini, google-ai-studio                       | google        |
 * | vertex-ai, vertexai, google-vertex-ai, vertex          | vertex-ai     |
 * | bedrock, aws-bedrock, amazon-bedrock                   | bedrock       |
 * | sagemaker, aws-sagemaker                               | sagemaker     |
 * | mistral-ai, mistral, mistralai                         | mistral-ai    |
 * | together-ai, together, togetherai                      | together-ai   |
 * | fireworks-ai, fireworks                                | fireworks-ai  |
 * | x-ai, xai, grok                                        | x-ai          |
 * | perplexity-ai, perplexity                              | perplexity-ai |
 * | dashscope, alibaba, qwen                               | dashscope     |
 * | nomic, nomic-ai                                        | nomic         |
 * | reka-ai, reka                                          | reka-ai       |
 * | workers-ai, cloudflare, cloudflare-workers-ai          | workers-ai    |
 * | stability-ai, stability                                | stability-ai  |
 * | fal-ai, fal                                            | fal-ai        |
 * | jina, jina-ai                                          | jina          |
 * | novita-ai, novita                                      | novita-ai     |
 * | moonshot, moonshot-ai, moonshotai                      | moonshot      |
 * | z-ai, zai                                              | z-ai          |
 * | oracle, oci                                            | oracle        |
 * | anthropic, cohere, groq, deepseek, openrouter, deepinfra, cerebras, anyscale, ai21, deepgram,
 * |   nebius, zhipu, minimax, byteplus, segmind, predibase, monsterapi, lightning-ai, ember-cloud,
 * |   deepbricks, claude-platform-aws, bedrock-mantle, palm, and the model-list-only files
 * |   github, inference-net, lambda, lemonfox-ai, modal, nscale, replicate, sambanova, upstage,
 * |   voyage                                               | same name     |
 *
 * No lookup crosses providers: the same model is priced differently by each host, so a miss is
 * a miss rather than another provider's price.
 */
export const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  'open-ai': 'openai',
  azure: 'azure-openai',
  'azure-ai-inference': 'azure-ai',
  'azure-foundry': 'azure-ai',
  gemini: 'google',
  'google-ai-studio': 'google',
  vertexai: 'vertex-ai',
  'google-vertex-ai': 'vertex-ai',
  vertex: 'vertex-ai',
  'aws-bedrock': 'bedrock',
  'amazon-bedrock': 'bedrock',
  'aws-sagemaker': 'sagemaker',
  mistral: 'mistral-ai',
  mistralai: 'mistral-ai',
  together: 'together-ai',
  togetherai: 'together-ai',
  fireworks: 'fireworks-ai',
  xai: 'x-ai',
  grok: 'x-ai',
  perplexity: 'perplexity-ai',
  alibaba: 'dashscope',
  qwen: 'dashscope',
  'nomic-ai': 'nomic',
  reka: 'reka-ai',
  cloudflare: 'workers-ai',
  'cloudflare-workers-ai': 'workers-ai',
  stability: 'stability-ai',
  fal: 'fal-ai',
  'jina-ai': 'jina',
  novita: 'novita-ai',
  'moonshot-ai': 'moonshot',
  moonshotai: 'moonshot',
  zai: 'z-ai',
  oci: 'oracle',
};

interface ProviderEntry {
  readonly id: string;
  readonly formula: PricingFormula | null;
  readonly params: Readonly<Record<string, CatalogParameter>>;
  readonly rawModels: Readonly<Record<string, unknown>>;
  /** Exact id → model id; and lowercased id → model id for case-insensitive hits. */
  readonly exact: ReadonlyMap<string, string>;
  readonly lower: ReadonlyMap<string, string>;
  /** Parsed on first use: most requests touch a handful of models. */
  readonly pricing: Map<string, ModelPricing | null>;
}

/** Anything past this many distinct (provider, model) strings is looked up without memoising. */
const MEMO_LIMIT = 20_000;

const DATE_SUFFIXES = [/-\d{4}-\d{2}-\d{2}$/, /-\d{8}$/, /@\d{8}$/];
const PATH_PREFIXES = [
  /^models\//,
  /^publishers\/[^/]+\/models\//,
  /^projects\/[^/]+\/locations\/[^/]+\/publishers\/[^/]+\/models\//,
  /^accounts\/[^/]+\/models\//,
];
const BEDROCK_ARN = /^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:[a-z-]+\/(.+)$/;
/** Cross-region inference profile prefixes (`us.anthropic.claude-...`). */
const BEDROCK_GEO_PREFIX = /^(us|eu|apac|ap|au|ca|jp|in|global|us-gov)\./;
const BEDROCK_VERSION_SUFFIX = /-v\d+(:\d+)?$/;
const BEDROCK_REVISION_SUFFIX = /:\d+$/;
const BEDROCK_VENDOR_PREFIX = /^[a-z0-9-]+\.(?=[a-z])/;
const FINE_TUNE = /^(ft:[^:]+):.+$/;

/**
 * Candidate ids for a model, most specific first. Each rule exists because a real client sends
 * that form: API resource paths, Bedrock ARNs and inference profiles, fine-tune ids, dated
 * snapshots newer than the catalog. A fine-tune never falls back to its base model: the prices
 * differ, and a wrong price is worse than none.
 */
export function modelIdCandidates(catalogProvider: string, model: string): string[] {
  const candidates: string[] = [];
  const add = (id: string) => {
    if (id.length > 0 && !candidates.includes(id)) candidates.push(id);
  };
  add(model);

  let id = model;
  const arn = BEDROCK_ARN.exec(id);
  if (arn) id = arn[1];
  for (const prefix of PATH_PREFIXES) id = id.replace(prefix, '');
  add(id);

  const fineTune = FINE_TUNE.exec(id);
  if (fineTune) {
    add(fineTune[1]);
    return candidates;
  }

  if (catalogProvider === 'bedrock' || catalogProvider === 'bedrock-mantle') {
    const withoutGeo = id.replace(BEDROCK_GEO_PREFIX, '');
    for (const base of [id, withoutGeo]) {
      add(base);
      add(base.replace(BEDROCK_REVISION_SUFFIX, ''));
      add(base.replace(BEDROCK_VERSION_SUFFIX, ''));
    }
    // The catalog also lists some Anthropic models under their bare Anthropic ids.
    const bare = withoutGeo.replace(BEDROCK_VENDOR_PREFIX, '');
    add(bare);
    add(bare.replace(BEDROCK_VERSION_SUFFIX, ''));
  }

  if (catalogProvider === 'azure-openai' || catalogProvider === 'azure-ai') {
    // Azure spells GPT-3.5 without the dot.
    if (id.includes('gpt-3.5')) add(id.replace('gpt-3.5', 'gpt-35'));
  }

  for (const suffix of DATE_SUFFIXES) {
    if (suffix.test(id)) {
      const undated = id.replace(suffix, '');
      add(undated);
      add(`${undated}-latest`);
    }
  }
  return candidates;
}

export class ModelCatalog {
  private readonly providers = new Map<string, ProviderEntry | null>();
  private readonly memo = new Map<string, ModelPricing | null>();
  private readonly available: ReadonlySet<string>;

  constructor(private readonly dataDir: string) {
    if (!existsSync(dataDir)) throw new Error(`model catalog data not found at ${dataDir}`);
    this.available = new Set(
      readdirSync(dataDir)
        .filter((file) => file.endsWith('.json'))
        .map((file) => file.slice(0, -'.json'.length)),
    );
  }

  /** The catalog file for one of our provider ids, or null. */
  resolveProvider(provider: string): string | null {
    const normalized = provider.trim().toLowerCase().replace(/^@/, '');
    const id = PROVIDER_ALIASES[normalized] ?? normalized;
    return this.available.has(id) ? id : null;
  }

  hasProvider(provider: string): boolean {
    return this.resolveProvider(provider) !== null;
  }

  providerIds(): string[] {
    return [...this.available].sort();
  }

  /**
   * Pricing for a model, or null when the provider or model is unknown or the model has no
   * price. Memoised per (provider, model) string, so the per-request cost is one map lookup.
   */
  getModelPricing(provider: string, model: string): ModelPricing | null {
    const key = `${provider}\u0000${model}`;
    const cached = this.memo.get(key);
    if (cached !== undefined || this.memo.has(key)) return cached ?? null;
    const pricing = this.lookupPricing(provider, model);
    // Model ids come from callers; the bound keeps hostile ids from growing the map forever.
    if (this.memo.size < MEMO_LIMIT) this.memo.set(key, pricing);
    return pricing;
  }

  /** The catalog model id a request's model resolves to, or null. */
  resolveModelId(provider: string, model: string): string | null {
    const entry = this.entry(provider);
    if (!entry) return null;
    for (const candidate of modelIdCandidates(entry.id, model)) {
      const hit = entry.exact.get(candidate) ?? entry.lower.get(candidate.toLowerCase());
      if (hit !== undefined) return hit;
    }
    return null;
  }

  listModels(provider?: string): CatalogModel[] {
    const ids = provider === undefined ? this.providerIds() : [this.resolveProvider(provider)];
    const models: CatalogModel[] = [];
    for (const id of ids) {
      const entry = id === null ? null : this.entry(id);
      if (!entry) continue;
      for (const model of [...entry.exact.keys()].sort()) models.push(this.describe(entry, model));
    }
    return models;
  }

  private lookupPricing(provider: string, model: string): ModelPricing | null {
    const entry = this.entry(provider);
    if (!entry) return null;
    for (const candidate of modelIdCandidates(entry.id, model)) {
      const hit = entry.exact.get(candidate) ?? entry.lower.get(candidate.toLowerCase());
      if (hit === undefined) continue;
      const pricing = this.pricingOf(entry, hit);
      // A listed model without a price does not stop the search: a less specific id may be priced.
      if (pricing) return pricing;
    }
    return null;
  }

  private pricingOf(entry: ProviderEntry, model: string): ModelPricing | null {
    if (entry.pricing.has(model)) return entry.pricing.get(model) ?? null;
    const raw = entry.rawModels[model];
    const pricing =
      isRecord(raw) && raw.pricing !== undefined
        ? parseModelPricing(entry.id, model, raw.pricing, entry.formula)
        : null;
    entry.pricing.set(model, pricing);
    return pricing;
  }

  private describe(entry: ProviderEntry, model: string): CatalogModel {
    const raw = entry.rawModels[model];
    const record = isRecord(raw) ? raw : {};
    const removeParams = parseStringList(record.removeParams);
    const params: Record<string, CatalogParameter> = { ...entry.params };
    for (const [key, bounds] of Object.entries(parseParameters(record.params))) {
      params[key] = { ...params[key], ...bounds };
    }
    for (const key of removeParams) delete params[key];
    return {
      provider: entry.id,
      id: model,
      type: typeof record.type === 'string' ? record.type : null,
      supported: parseStringList(record.supported),
      params,
      removeParams,
      priced: record.pricing !== undefined,
    };
  }

  private entry(provider: string): ProviderEntry | null {
    const id = this.resolveProvider(provider);
    if (id === null) return null;
    if (this.providers.has(id)) return this.providers.get(id) ?? null;
    const entry = this.load(id);
    this.providers.set(id, entry);
    return entry;
  }

  private load(id: string): ProviderEntry {
    const file = join(this.dataDir, `${id}.json`);
    const document: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isRecord(document) || !isRecord(document.models)) {
      throw new CatalogFormatError(`${file}: expected { models: {...} }`);
    }
    if (document.currency !== undefined && document.currency !== 'USD') {
      throw new CatalogFormatError(`${file}: only USD prices are supported`);
    }
    const exact = new Map<string, string>();
    const lower = new Map<string, string>();
    for (const model of Object.keys(document.models).sort()) {
      exact.set(model, model);
      // Sorted insertion keeps the case-insensitive winner stable when two ids differ only in case.
      if (!lower.has(model.toLowerCase())) lower.set(model.toLowerCase(), model);
    }
    return {
      id,
      formula: parseFormula(document.calculate, `${id}.calculate`),
      params: parseParameters(document.params),
      rawModels: document.models,
      exact,
      lower,
      pricing: new Map(),
    };
  }
}

/** Where the build puts the derived JSON (nest-cli copies it next to the compiled code). */
export const DEFAULT_CATALOG_DIR = join(__dirname, 'data');

let shared: ModelCatalog | undefined;

/** The shipped catalog, opened on first use and kept for the process lifetime. */
export function getModelCatalog(): ModelCatalog {
  shared ??= new ModelCatalog(DEFAULT_CATALOG_DIR);
  return shared;
}

export function getModelPricing(provider: string, model: string): ModelPricing | null {
  return getModelCatalog().getModelPricing(provider, model);
}

export function listModels(provider?: string): CatalogModel[] {
  return getModelCatalog().listModels(provider);
}

export function hasProvider(provider: string): boolean {
  return getModelCatalog().hasProvider(provider);
}
