import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { computeCost, tokenUsageFromOpenAI } from './cost';
import {
  DEFAULT_CATALOG_DIR,
  ModelCatalog,
  getModelPricing,
  hasProvider,
  listModels,
  modelIdCandidates,
} from './model-catalog';
import { evaluateExpression, referencedValues, UnknownPricingReferenceError } from './pricing-expression';

const catalog = new ModelCatalog(DEFAULT_CATALOG_DIR);
const matched = (provider: string, model: string) => {
  const pricing = catalog.getModelPricing(provider, model);
  return pricing ? `${pricing.provider}/${pricing.model}` : null;
};

describe('provider ids', () => {
  it.each([
    ['openai', 'openai'],
    ['open-ai', 'openai'],
    ['OpenAI', 'openai'],
    ['azure-openai', 'azure-openai'],
    ['google', 'google'],
    ['gemini', 'google'],
    ['vertex-ai', 'vertex-ai'],
    ['bedrock', 'bedrock'],
    ['mistral-ai', 'mistral-ai'],
    ['together-ai', 'together-ai'],
    ['fireworks-ai', 'fireworks-ai'],
    ['x-ai', 'x-ai'],
    ['xai', 'x-ai'],
    ['perplexity-ai', 'perplexity-ai'],
    ['cohere', 'cohere'],
    ['groq', 'groq'],
    ['deepseek', 'deepseek'],
    ['openrouter', 'openrouter'],
    ['deepinfra', 'deepinfra'],
    ['cerebras', 'cerebras'],
    ['anthropic', 'anthropic'],
  ])('%s maps to the %s catalog', (ours, file) => {
    expect(catalog.resolveProvider(ours)).toBe(file);
    expect(catalog.hasProvider(ours)).toBe(true);
  });

  it('an unknown provider has no catalog', () => {
    expect(catalog.resolveProvider('acme-llm')).toBeNull();
    expect(catalog.hasProvider('acme-llm')).toBe(false);
    expect(catalog.listModels('acme-llm')).toEqual([]);
  });

  it('lookups never cross providers', () => {
    // gpt-4o exists under openai, but not as a bare id under anthropic
    expect(matched('anthropic', 'gpt-4o')).toBeNull();
  });
});

describe('model id normalisation', () => {
  it('an exact id wins over every rule', () => {
    expect(matched('openai', 'gpt-4o-2024-05-13')).toBe('openai/gpt-4o-2024-05-13');
    expect(matched('openai', 'gpt-4o-mini-2024-07-18')).toBe('openai/gpt-4o-mini-2024-07-18');
  });

  it('an unknown OpenAI date snapshot falls back to its undated alias', () => {
    expect(matched('openai', 'gpt-4o-2031-01-01')).toBe('openai/gpt-4o');
    expect(matched('openai', 'gpt-4o-mini-2031-01-01')).toBe('openai/gpt-4o-mini');
  });

  it('an unknown Anthropic date snapshot falls back to the -latest alias', () => {
    expect(matched('anthropic', 'claude-3-5-haiku-20991231')).toBe('anthropic/claude-3-5-haiku-latest');
  });

  it('ids are matched case-insensitively when no exact id exists', () => {
    expect(matched('openai', 'GPT-4o')).toBe('openai/gpt-4o');
  });

  it('Bedrock: inference-profile prefixes, revision and version suffixes, ARNs', () => {
    expect(matched('bedrock', 'anthropic.claude-3-5-sonnet-20241022-v2:0')).toBe(
      'bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    // listed without a price under its us. id: the search goes on to the priced base id
    expect(matched('bedrock', 'us.anthropic.claude-3-5-sonnet-20241022-v2:0')).toBe(
      'bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    expect(matched('bedrock', 'apac.anthropic.claude-3-5-sonnet-20241022-v2:0')).toBe(
      'bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0',
    );
    expect(matched('bedrock', 'jp.anthropic.claude-opus-4-6-v1:0')).toBe(
      'bedrock/anthropic.claude-opus-4-6-v1:0',
    );
    expect(matched('bedrock', 'eu.anthropic.claude-opus-4-6-v1:0')).toBe(
      'bedrock/eu.anthropic.claude-opus-4-6-v1:0',
    );
    expect(matched('bedrock', 'anthropic.claude-sonnet-4-6-v1:0')).toBe(
      'bedrock/anthropic.claude-sonnet-4-6-v1:0',
    );
    expect(
      matched(
        'bedrock',
        'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-3-70b-instruct-v1:0',
      ),
    ).toBe('bedrock/meta.llama3-3-70b-instruct-v1:0');
    expect(matched('bedrock', 'anthropic.claude-nonexistent-v1:0')).toBeNull();
  });

  it('Bedrock rules do not apply to other providers', () => {
    expect(modelIdCandidates('openai', 'us.gpt-4o')).toEqual(['us.gpt-4o']);
  });

  it('resource paths are reduced to the model id', () => {
    expect(matched('google', 'models/gemini-2.0-flash')).toBe('google/gemini-2.0-flash');
    expect(matched('vertex-ai', 'publishers/google/models/gemini-2.5-pro')).toBe('vertex-ai/gemini-2.5-pro');
    expect(matched('fireworks-ai', 'accounts/fireworks/models/deepseek-r1')).toBe('fireworks-ai/deepseek-r1');
  });

  it('Vertex Anthropic ids keep their @date form', () => {
    expect(matched('vertex-ai', 'claude-3-5-sonnet-v2@20241022')).toBe(
      'vertex-ai/claude-3-5-sonnet-v2@20241022',
    );
  });

  it('fine-tuned ids resolve to the fine-tune price, never to the base model price', () => {
    expect(matched('openai', 'ft:gpt-4o-mini-2024-07-18:acme::9abcDEF')).toBe(
      'openai/ft:gpt-4o-mini-2024-07-18',
    );
    expect(matched('openai', 'ft:gpt-4o-2031-01-01:acme::9abcDEF')).toBeNull();
  });

  it('Azure spells GPT-3.5 without the dot: the Azure spelling is tried after the exact id', () => {
    expect(modelIdCandidates('azure-openai', 'gpt-3.5-turbo-16k')).toEqual([
      'gpt-3.5-turbo-16k',
      'gpt-35-turbo-16k',
    ]);
    expect(modelIdCandidates('openai', 'gpt-3.5-turbo-16k')).toEqual(['gpt-3.5-turbo-16k']);
    expect(matched('azure-openai', 'gpt-35-turbo-16k')).toBe('azure-openai/gpt-35-turbo-16k');
  });

  it('google context tiers are folded into one model id', () => {
    expect(matched('google', 'gemini-2.5-flash')).toBe('google/gemini-2.5-flash');
    expect(matched('google', 'gemini-2.5-flash-lte-128k')).toBeNull();
  });

  it('lookups are memoised: the same object comes back', () => {
    expect(catalog.getModelPricing('openai', 'gpt-4o')).toBe(catalog.getModelPricing('openai', 'gpt-4o'));
  });
});

describe('listModels', () => {
  it('describes type, features, parameter bounds and rejected parameters', () => {
    const o3 = catalog.listModels('openai').find((model) => model.id === 'o3');
    expect(o3).toMatchObject({
      provider: 'openai',
      type: 'chat',
      supported: ['tools'],
      priced: true,
      params: { max_completion_tokens: { min: 1, max: 100000 } },
    });
    expect(o3!.removeParams).toContain('temperature');
    expect(o3!.params.temperature).toBeUndefined();
  });

  it('without a provider lists every catalog, sorted per provider', () => {
    const all = catalog.listModels();
    expect(all.length).toBeGreaterThan(4000);
    const providers = new Set(all.map((model) => model.provider));
    expect(providers.has('openai') && providers.has('bedrock') && providers.has('voyage')).toBe(true);
  });
});

describe('module-level helpers use the shipped catalog', () => {
  it('getModelPricing, listModels and hasProvider', () => {
    expect(getModelPricing('openai', 'gpt-4o')?.rates.units.request_token).toBe(0.00025);
    expect(hasProvider('vertex-ai')).toBe(true);
    expect(listModels('deepseek').map((model) => model.id)).toContain('deepseek-chat');
  });
});

describe('a catalog from another directory', () => {
  it('reads the derived format, including comma-separated regions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
    writeFileSync(
      join(dir, 'acme.json'),
      JSON.stringify({
        provider: 'acme',
        currency: 'USD',
        models: {
          small: {
            type: 'chat',
            pricing: {
              rates: { request_token: 0.001, response_token: 0.002 },
              regions: { 'eu-1,eu-2': { rates: { request_token: 0.003 } } },
            },
          },
        },
      }),
    );
    const local = new ModelCatalog(dir);
    const pricing = local.getModelPricing('acme', 'small');
    // eu-2: 10 × 0.003 + 10 × 0.002 = 0.05
    expect(
      computeCost(pricing, { promptTokens: 10, completionTokens: 10 }, { region: 'eu-2' })!.cents,
    ).toBeCloseTo(0.05, 10);
    expect(() => new ModelCatalog(join(dir, 'missing'))).toThrow(/not found/);
  });
});

describe('pricing expressions', () => {
  const resolve = (name: string) => ({ a: 2, b: 3, 'rates.x': 0.5 })[name];

  it('evaluates sum and multiply over literals and names', () => {
    const expression = {
      operation: 'sum' as const,
      operands: [
        { operation: 'multiply' as const, operands: [{ value: 'a' }, { value: 'rates.x' }] },
        { operation: 'multiply' as const, operands: [{ value: '4' }, { value: 'b' }] },
      ],
    };
    // 2 × 0.5 + 4 × 3 = 13
    expect(evaluateExpression(expression, resolve)).toBe(13);
    expect([...referencedValues(expression)].sort()).toEqual(['a', 'b', 'rates.x']);
  });

  it('an unknown name is an error, not a zero', () => {
    expect(() => evaluateExpression({ value: 'nope' }, resolve)).toThrow(UnknownPricingReferenceError);
  });

  it('refuses absurdly deep trees', () => {
    let expression: Parameters<typeof evaluateExpression>[0] = { value: 'a' };
    for (let depth = 0; depth < 40; depth += 1) expression = { operation: 'sum', operands: [expression] };
    expect(() => evaluateExpression(expression, resolve)).toThrow(RangeError);
  });
});

describe('tokenUsageFromOpenAI', () => {
  it('reads chat and Responses API usage objects', () => {
    expect(
      tokenUsageFromOpenAI({
        prompt_tokens: 100,
        completion_tokens: 50,
        prompt_tokens_details: { cached_tokens: 40, audio_tokens: 10, cache_creation_tokens: 5 },
        completion_tokens_details: { reasoning_tokens: 30, audio_tokens: 0 },
      }),
    ).toMatchObject({
      promptTokens: 100,
      completionTokens: 50,
      cachedReadTokens: 40,
      cacheWriteTokens: 5,
      promptAudioTokens: 10,
      reasoningTokens: 30,
      completionAudioTokens: 0,
    });
    expect(
      tokenUsageFromOpenAI({
        input_tokens: 7,
        output_tokens: 3,
        output_tokens_details: { reasoning_tokens: 2 },
      }),
    ).toMatchObject({ promptTokens: 7, completionTokens: 3, reasoningTokens: 2 });
    expect(tokenUsageFromOpenAI({})).toBeNull();
    expect(tokenUsageFromOpenAI('nope')).toBeNull();
  });
});
