import type { ProviderAdapter } from './types';
import { anthropicAdapter } from './anthropic/anthropic.adapter';
import { azureOpenAiAdapter } from './azure-openai/azure-openai.adapter';
import { bedrockAdapter } from './bedrock';
import { cohereAdapter } from './cohere/cohere.adapter';
import { googleAdapter, vertexAdapter } from './google';
import { openAiAdapter } from './openai/openai.adapter';
import { createOpenAiCompatibleAdapter } from './openai-compatible/openai-compatible.adapter';
import { OPENAI_COMPATIBLE_PROVIDERS } from './openai-compatible/openai-compatible.providers';

const ADAPTERS: readonly ProviderAdapter[] = [
  openAiAdapter,
  azureOpenAiAdapter,
  anthropicAdapter,
  cohereAdapter,
  googleAdapter,
  vertexAdapter,
  bedrockAdapter,
  ...OPENAI_COMPATIBLE_PROVIDERS.map(createOpenAiCompatibleAdapter),
];

/** Other spellings clients use for the same provider; the canonical id is what logs record. */
const ALIASES: Readonly<Record<string, string>> = {
  'open-ai': 'openai',
  azure: 'azure-openai',
  'azure-open-ai': 'azure-openai',
  gemini: 'google',
  vertex: 'vertex-ai',
  'aws-bedrock': 'bedrock',
  together: 'together-ai',
  fireworks: 'fireworks-ai',
  xai: 'x-ai',
  perplexity: 'perplexity-ai',
  mistral: 'mistral-ai',
  huggingface: 'hugging-face',
  nvidia: 'nvidia-nim',
  novita: 'novita-ai',
  featherless: 'featherless-ai',
  reka: 'reka-ai',
  lemonfox: 'lemonfox-ai',
  'voyage-ai': 'voyage',
  'jina-ai': 'jina',
  'cloudflare-workers-ai': 'workers-ai',
  'github-models': 'github',
  lmstudio: 'lm-studio',
};

const BY_ID: ReadonlyMap<string, ProviderAdapter> = (() => {
  const map = new Map<string, ProviderAdapter>();
  for (const adapter of ADAPTERS) {
    if (map.has(adapter.id)) throw new Error(`Duplicate provider adapter id ${adapter.id}`);
    map.set(adapter.id, adapter);
  }
  for (const [alias, id] of Object.entries(ALIASES)) {
    const adapter = map.get(id);
    if (adapter && !map.has(alias)) map.set(alias, adapter);
  }
  return map;
})();

/** The adapter for a provider id or alias (case-insensitive), or undefined when unknown. */
export function getProviderAdapter(id: string): ProviderAdapter | undefined {
  return BY_ID.get(id) ?? BY_ID.get(id.trim().toLowerCase());
}

/** Canonical provider ids, without aliases. */
export function listProviderIds(): string[] {
  return ADAPTERS.map((adapter) => adapter.id);
}

export function listProviderAdapters(): readonly ProviderAdapter[] {
  return ADAPTERS;
}
