import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parseFormula } from './catalog-parser';
import type { ModelPricing } from './catalog.types';
import {
  computeCost,
  computeCostAmount,
  resolvePricing,
  unknownFormulaReferences,
  type TokenUsage,
} from './cost';
import { DEFAULT_CATALOG_DIR, ModelCatalog } from './model-catalog';

/**
 * Every expected figure is worked out by hand from the catalog rates (US cents per token) and
 * written beside the assertion, so a change in the cost rules or in the data shows up here.
 */
const catalog = new ModelCatalog(DEFAULT_CATALOG_DIR);

function costOf(provider: string, model: string, usage: TokenUsage, options = {}) {
  const pricing = catalog.getModelPricing(provider, model);
  expect(pricing).not.toBeNull();
  const cost = computeCost(pricing, usage, options);
  expect(cost).not.toBeNull();
  return cost!;
}

function expectCents(actual: number, expected: number) {
  expect(actual).toBeCloseTo(expected, 9);
}

describe('computeCost against hand-computed figures', () => {
  it('gpt-4o: plain input and output', () => {
    // 1000 × 0.00025 + 500 × 0.001 = 0.25 + 0.5 = 0.75 cents = $0.0075
    const cost = costOf('openai', 'gpt-4o', { promptTokens: 1000, completionTokens: 500 });
    expectCents(cost.cents, 0.75);
    expect(cost.amount).toBeCloseTo(0.0075, 12);
    expect(cost.currency).toBe('USD');
    expectCents(cost.breakdown.requestCents, 0.25);
    expectCents(cost.breakdown.responseCents, 0.5);
  });

  it('gpt-4o-mini: cached tokens are part of the prompt and billed at the cache rate', () => {
    // uncached = 10000 − 8000 = 2000 → 2000 × 0.000015 = 0.03
    // cached   = 8000 × 0.0000075 = 0.06
    // output   = 1000 × 0.00006 = 0.06            total 0.15 cents
    const cost = costOf('openai', 'gpt-4o-mini', {
      promptTokens: 10_000,
      cachedReadTokens: 8000,
      completionTokens: 1000,
    });
    expectCents(cost.cents, 0.15);
    expect(cost.breakdown.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ component: 'input_tokens', quantity: 2000 }),
        expect.objectContaining({ component: 'cache_read_tokens', quantity: 8000 }),
      ]),
    );
  });

  it('o3: reasoning tokens are inside completion tokens and not billed twice', () => {
    // 2000 × 0.0002 = 0.4; completion 3000 (2500 of them reasoning) × 0.0008 = 2.4; total 2.8
    const cost = costOf('openai', 'o3', {
      promptTokens: 2000,
      completionTokens: 3000,
      reasoningTokens: 2500,
    });
    expectCents(cost.cents, 2.8);
  });

  it('o1: cached input at half price', () => {
    // uncached 1500 × 0.0015 = 2.25; cached 500 × 0.00075 = 0.375; output 1000 × 0.006 = 6; total 8.625
    const cost = costOf('openai', 'o1', {
      promptTokens: 2000,
      cachedReadTokens: 500,
      completionTokens: 1000,
      reasoningTokens: 800,
    });
    expectCents(cost.cents, 8.625);
  });

  it('claude sonnet 4: cache reads, 5-minute and 1-hour cache writes', () => {
    // prompt 12000 = 500 uncached + 10000 read + 1500 written (1000 at 5m, 500 at 1h)
    // 500 × 0.0003 = 0.15; 10000 × 0.00003 = 0.3; 1000 × 0.000375 = 0.375; 500 × 0.0006 = 0.3
    // output 800 × 0.0015 = 1.2                                         total 2.325 cents
    const cost = costOf('anthropic', 'claude-sonnet-4-20250514', {
      promptTokens: 12_000,
      cachedReadTokens: 10_000,
      cacheWriteTokens: 1500,
      cacheWrite1hTokens: 500,
      completionTokens: 800,
    });
    expectCents(cost.cents, 2.325);
    expectCents(cost.breakdown.requestCents, 1.125);
  });

  it('gemini 2.5 pro (google): the long-context tier applies above 128k prompt tokens', () => {
    // ≤128k: 100000 × 0.000125 + 1000 × 0.001 = 12.5 + 1 = 13.5
    expectCents(
      costOf('google', 'gemini-2.5-pro', { promptTokens: 100_000, completionTokens: 1000 }).cents,
      13.5,
    );
    // >128k: 200000 × 0.00025 + 1000 × 0.0015 = 50 + 1.5 = 51.5
    const long = costOf('google', 'gemini-2.5-pro', { promptTokens: 200_000, completionTokens: 1000 });
    expectCents(long.cents, 51.5);
    expect(long.breakdown.contextTier).toBe(128_000);
  });

  it('gemini 2.0 flash (google): cache reads are billed although the provider formula omits them', () => {
    // google's formula is input × request + output × response only; the model prices cache reads.
    // 4000 × 0.00001 = 0.04; 6000 × 0.0000025 = 0.015; 2000 × 0.00004 = 0.08; total 0.135
    const cost = costOf('google', 'gemini-2.0-flash', {
      promptTokens: 10_000,
      cachedReadTokens: 6000,
      completionTokens: 2000,
    });
    expectCents(cost.cents, 0.135);
  });

  it('gemini 2.5 pro (vertex-ai): batch mode with its own long-context tier', () => {
    // batch >200k: 250000 × 0.000125 = 31.25; 1000 × 0.00075 = 0.75; total 32
    const cost = costOf(
      'vertex-ai',
      'gemini-2.5-pro',
      { promptTokens: 250_000, completionTokens: 1000 },
      { mode: 'batch' },
    );
    expectCents(cost.cents, 32);
    expect(cost.breakdown.mode).toBe('batch');
    expect(cost.breakdown.contextTier).toBe(200_000);
  });

  it('bedrock claude 3.5 sonnet through a cross-region inference profile', () => {
    // 1000 × 0.0003 + 100 × 0.0015 = 0.3 + 0.15 = 0.45
    expectCents(
      costOf('bedrock', 'us.anthropic.claude-3-5-sonnet-20241022-v2:0', {
        promptTokens: 1000,
        completionTokens: 100,
      }).cents,
      0.45,
    );
  });

  it('bedrock nova lite: regional price for eu-west-2, base price elsewhere', () => {
    // eu-west-2: 1000 × 0.0000084 + 100 × 0.0000336 = 0.0084 + 0.00336 = 0.01176
    const eu = costOf(
      'bedrock',
      'amazon.nova-lite-v1:0',
      { promptTokens: 1000, completionTokens: 100 },
      { region: 'eu-west-2' },
    );
    expectCents(eu.cents, 0.01176);
    expect(eu.breakdown.region).toBe('eu-west-2');
    // us-east-1 (no regional entry): 1000 × 0.000006 + 100 × 0.000024 = 0.006 + 0.0024 = 0.0084
    const base = costOf(
      'bedrock',
      'amazon.nova-lite-v1:0',
      { promptTokens: 1000, completionTokens: 100 },
      { region: 'us-east-1' },
    );
    expectCents(base.cents, 0.0084);
    expect(base.breakdown.region).toBeNull();
  });

  it('mistral large', () => {
    // 3000 × 0.00005 + 1000 × 0.00015 = 0.15 + 0.15 = 0.3
    expectCents(
      costOf('mistral-ai', 'mistral-large-latest', { promptTokens: 3000, completionTokens: 1000 }).cents,
      0.3,
    );
  });

  it('cohere command-r-plus', () => {
    // 2000 × 0.00025 + 400 × 0.001 = 0.5 + 0.4 = 0.9
    expectCents(costOf('cohere', 'command-r-plus', { promptTokens: 2000, completionTokens: 400 }).cents, 0.9);
  });

  it('groq llama 3.3 70b', () => {
    // 10000 × 0.000059 + 2000 × 0.000079 = 0.59 + 0.158 = 0.748
    expectCents(
      costOf('groq', 'llama-3.3-70b-versatile', { promptTokens: 10_000, completionTokens: 2000 }).cents,
      0.748,
    );
  });

  it('deepseek chat: cache hits at the hit price, misses at the input price', () => {
    // misses 1000 × 0.000014 = 0.014; hits 9000 × 0.00000028 = 0.00252; output 500 × 0.000028 = 0.014
    // total 0.03052
    const cost = costOf('deepseek', 'deepseek-chat', {
      promptTokens: 10_000,
      cachedReadTokens: 9000,
      completionTokens: 500,
    });
    expectCents(cost.cents, 0.03052);
  });

  it('text-embedding-3-small: input only, batch at half price', () => {
    // 50000 × 0.000002 = 0.1; batch 50000 × 0.000001 = 0.05
    expectCents(costOf('openai', 'text-embedding-3-small', { promptTokens: 50_000 }).cents, 0.1);
    expectCents(
      costOf('openai', 'text-embedding-3-small', { promptTokens: 50_000 }, { mode: 'batch' }).cents,
      0.05,
    );
  });

  it('gpt-4o-audio-preview: audio tokens at audio rates, text at text rates', () => {
    // input 1000 = 400 text × 0.00025 (0.1) + 600 audio × 0.01 (6)
    // output 500 = 100 text × 0.001 (0.1) + 400 audio × 0.02 (8)         total 14.2
    const cost = costOf('openai', 'gpt-4o-audio-preview', {
      promptTokens: 1000,
      promptAudioTokens: 600,
      completionTokens: 500,
      completionAudioTokens: 400,
    });
    expectCents(cost.cents, 14.2);
  });

  it('azure gpt-4o realtime: the formula is evaluated and cache reads are added beside it', () => {
    // text in 200 × 0.0005 = 0.1; audio in 600 × 0.004 = 2.4; cached 200 × 0.00025 = 0.05
    // text out 100 × 0.002 = 0.2; audio out 400 × 0.008 = 3.2                 total 5.95
    const cost = costOf('azure-openai', 'gpt-4o-realtime-preview', {
      promptTokens: 1000,
      cachedReadTokens: 200,
      promptAudioTokens: 600,
      completionTokens: 500,
      completionAudioTokens: 400,
    });
    expectCents(cost.cents, 5.95);
  });

  it('qwen-plus: reasoning tokens at the reasoning rate, the rest of the output at the output rate', () => {
    // 100 × 0.00004 = 0.004; (1000 − 800) × 0.00012 = 0.024; 800 × 0.0004 = 0.32; total 0.348
    const cost = costOf('dashscope', 'qwen-plus', {
      promptTokens: 100,
      completionTokens: 1000,
      reasoningTokens: 800,
    });
    expectCents(cost.cents, 0.348);
  });

  it('dall-e-3: priced per image by quality and size through the catalog formula', () => {
    // 2 × hd 1024x1792 (12 cents) = 24 cents; prompt tokens are multiplied by 0 in the formula
    const cost = costOf('openai', 'dall-e-3', {
      promptTokens: 50,
      images: { count: 2, quality: 'hd', size: '1024x1792' },
    });
    expectCents(cost.cents, 24);
    // unknown size falls back to the quality's default: standard 4 cents
    expectCents(costOf('openai', 'dall-e-3', { images: { count: 1, size: '999x999' } }).cents, 4);
  });

  it('perplexity online model: per-request fee on top of tokens', () => {
    // 100 × 0.00002 + 100 × 0.00002 + 0.5 fee = 0.504
    const cost = costOf('perplexity-ai', 'llama-3.1-sonar-small-128k-online', {
      promptTokens: 100,
      completionTokens: 100,
    });
    expectCents(cost.cents, 0.504);
    expectCents(cost.breakdown.fixedCents, 0.5);
  });

  it('grok-4: web searches as additional units; units without a price are reported, not invented', () => {
    // 1000 × 0.0003 + 100 × 0.0015 + 3 searches × 0.5 = 0.3 + 0.15 + 1.5 = 1.95
    const cost = costOf('x-ai', 'grok-4', {
      promptTokens: 1000,
      completionTokens: 100,
      additionalUnits: { web_search: 3, teleportation: 2 },
    });
    expectCents(cost.cents, 1.95);
    expectCents(cost.breakdown.additionalCents, 1.5);
    expect(cost.breakdown.unpriced).toEqual(['teleportation']);
  });

  it('priority mode on gpt-4o-mini', () => {
    // 1000 × 0.000025 + 1000 × 0.0001 = 0.025 + 0.1 = 0.125
    const cost = costOf(
      'openai',
      'gpt-4o-mini',
      { promptTokens: 1000, completionTokens: 1000 },
      { mode: 'priority' },
    );
    expectCents(cost.cents, 0.125);
    // an unknown mode is reported as standard: 1000 × 0.000015 + 1000 × 0.00006 = 0.075
    const fallback = costOf(
      'openai',
      'gpt-4o-mini',
      { promptTokens: 1000, completionTokens: 1000 },
      { mode: 'warp' },
    );
    expectCents(fallback.cents, 0.075);
    expect(fallback.breakdown.mode).toBe('standard');
  });

  it('a cache read on a model without a cache price costs full input, not nothing', () => {
    // mistral-large has no cache price: 3000 × 0.00005 = 0.15 regardless of the 2000 cached
    expectCents(
      costOf('mistral-ai', 'mistral-large-latest', { promptTokens: 3000, cachedReadTokens: 2000 }).cents,
      0.15,
    );
  });

  it('inconsistent usage (parts larger than the total) is clamped, never negative', () => {
    // cached reported above prompt: everything is billed as cache reads, 100 × 0.0000075 = 0.00075
    const cost = costOf('openai', 'gpt-4o-mini', {
      promptTokens: 100,
      cachedReadTokens: 500,
      completionTokens: -3,
    });
    expectCents(cost.cents, 0.00075);
  });
});

describe('unknown cost', () => {
  it('an unknown model or provider has no pricing and no cost', () => {
    expect(catalog.getModelPricing('openai', 'gpt-99-imaginary')).toBeNull();
    expect(catalog.getModelPricing('no-such-provider', 'gpt-4o')).toBeNull();
    expect(computeCost(null, { promptTokens: 10 })).toBeNull();
    expect(computeCost(undefined, { promptTokens: 10 })).toBeNull();
  });

  it('a listed model without a price is null, not zero', () => {
    // cohere lists command-a-03-2025 in its model list but the catalog has no price for it
    expect(
      catalog.listModels('cohere').some((model) => model.id === 'command-a-03-2025' && !model.priced),
    ).toBe(true);
    expect(catalog.getModelPricing('cohere', 'command-a-03-2025')).toBeNull();
  });

  it('a formula that reads an unknown value makes the cost unknown', () => {
    const pricing = resolvePricing(null, {
      pricingConfig: {
        pay_as_you_go: { request_token: { price: 1 } },
        calculate: {
          request: {
            operation: 'multiply',
            operands: [{ value: 'mystery_tokens' }, { value: 'rates.request_token' }],
          },
          response: { value: '0' },
        },
      },
    });
    expect(computeCost(pricing, { promptTokens: 10 })).toBeNull();
  });

  it('tokens with no rate at all are flagged as unpriced', () => {
    const pricing = resolvePricing(null, { pricingConfig: { pay_as_you_go: { response_token: 0.001 } } });
    const cost = computeCost(pricing, { promptTokens: 10, completionTokens: 10 });
    expectCents(cost!.cents, 0.01);
    expect(cost!.breakdown.unpriced).toEqual(['input_tokens']);
  });
});

describe('resolvePricing', () => {
  const base = catalog.getModelPricing('openai', 'gpt-4o') as ModelPricing;
  const usage = { promptTokens: 1000, cachedReadTokens: 400, completionTokens: 500 };
  // base: 600 × 0.00025 = 0.15; 400 × 0.000125 = 0.05; 500 × 0.001 = 0.5; total 0.7
  it('without an override returns the catalog entry unchanged', () => {
    expect(resolvePricing(base, null)).toBe(base);
    expectCents(computeCost(base, usage)!.cents, 0.7);
  });

  it('multipliers: specific keys win, the rest inherit default', () => {
    const adjusted = resolvePricing(base, { multiplier: { default: 0.8, cache_read_input_token: 0.5 } });
    // 0.15 × 0.8 = 0.12; 0.05 × 0.5 = 0.025; 0.5 × 0.8 = 0.4; total 0.545
    expectCents(computeCost(adjusted, usage)!.cents, 0.545);
    // the catalog entry itself is untouched
    expectCents(computeCost(base, usage)!.cents, 0.7);
  });

  it('multipliers also scale mode prices and per-call fees', () => {
    const adjusted = resolvePricing(base, { multiplier: { default: 2 } });
    // batch: 1000 × 0.000125 + 500 × 0.0005 = 0.125 + 0.25 = 0.375, doubled 0.75
    expectCents(
      computeCost(adjusted, { promptTokens: 1000, completionTokens: 500 }, { mode: 'batch' })!.cents,
      0.75,
    );
    const online = catalog.getModelPricing('perplexity-ai', 'llama-3.1-sonar-small-128k-online');
    // (100 × 0.00002 + 0.5) × 2 = 1.004
    expectCents(
      computeCost(resolvePricing(online, { multiplier: { default: 2 } }), { promptTokens: 100 })!.cents,
      1.004,
    );
  });

  it('absolute rates replace specific catalog prices and win over modes', () => {
    const adjusted = resolvePricing(base, { rates: { response_token: { price: 0.002 } } });
    // 0.15 + 0.05 + 500 × 0.002 = 1.2
    expectCents(computeCost(adjusted, usage)!.cents, 1.2);
    // batch: 1000 × 0.000125 + 500 × 0.002 = 1.125
    expectCents(
      computeCost(adjusted, { promptTokens: 1000, completionTokens: 500 }, { mode: 'batch' })!.cents,
      1.125,
    );
  });

  it('custom pricing prices an unknown model and ignores multipliers', () => {
    const custom = resolvePricing(
      null,
      {
        multiplier: { default: 10 },
        pricingConfig: {
          pay_as_you_go: { request_token: { price: 0.0001 }, response_token: { price: 0.0002 } },
        },
      },
      { provider: 'openai', model: 'my-finetune' },
    );
    expect(custom).toMatchObject({ source: 'custom', provider: 'openai', model: 'my-finetune' });
    // 1000 × 0.0001 + 500 × 0.0002 = 0.2
    expectCents(computeCost(custom, { promptTokens: 1000, completionTokens: 500 })!.cents, 0.2);
  });

  it('custom pricing replaces a catalog entry, including its modes', () => {
    const custom = resolvePricing(base, {
      pricingConfig: { pay_as_you_go: { request_token: 0.001, response_token: 0 } },
    });
    // 1000 × 0.001 = 1 (cached tokens stay at the input price: the custom config has no cache price)
    expectCents(computeCost(custom, usage, { mode: 'batch' })!.cents, 1);
  });

  it('rejects negative multipliers, negative prices and other currencies', () => {
    expect(() => resolvePricing(base, { multiplier: { default: -1 } })).toThrow(RangeError);
    expect(() => resolvePricing(base, { rates: { request_token: -0.1 } })).toThrow();
    expect(() => resolvePricing(null, { pricingConfig: { currency: 'EUR', pay_as_you_go: {} } })).toThrow(
      RangeError,
    );
  });
});

describe('shipped data', () => {
  it('every formula in the shipped catalog reads only values the cost function knows', () => {
    const unknown: string[] = [];
    const formulas: unknown[] = [];
    for (const file of readdirSync(DEFAULT_CATALOG_DIR).filter((name) => name.endsWith('.json'))) {
      const document = JSON.parse(readFileSync(join(DEFAULT_CATALOG_DIR, file), 'utf8'));
      if (document.calculate) formulas.push(document.calculate);
      for (const model of Object.values<any>(document.models)) {
        if (model.pricing?.calculate) formulas.push(model.pricing.calculate);
      }
    }
    expect(formulas.length).toBeGreaterThan(50);
    for (const raw of formulas) {
      const formula = parseFormula(raw)!;
      unknown.push(
        ...unknownFormulaReferences(formula.request),
        ...unknownFormulaReferences(formula.response),
      );
    }
    expect([...new Set(unknown)]).toEqual([]);
  });

  it('every priced model in the shipped catalog parses and yields a non-negative cost', () => {
    let priced = 0;
    for (const model of catalog.listModels()) {
      if (!model.priced) continue;
      const pricing = catalog.getModelPricing(model.provider, model.id);
      const cost = computeCost(pricing, { promptTokens: 1000, completionTokens: 1000 });
      expect(cost).not.toBeNull();
      expect(cost!.cents).toBeGreaterThanOrEqual(0);
      priced += 1;
    }
    expect(priced).toBeGreaterThan(2500);
  });
});

describe('computeCostAmount', () => {
  /** Usages that reach every bucket, clamp, price images and units, and leave parts unpriced. */
  const usages: TokenUsage[] = [
    { promptTokens: 1000, completionTokens: 1000 },
    { promptTokens: 12, completionTokens: 9 },
    { promptTokens: 0, completionTokens: 0 },
    { promptTokens: 300_000, completionTokens: 2000, cachedReadTokens: 150_000 },
    {
      promptTokens: 5000,
      completionTokens: 3000,
      cachedReadTokens: 1000,
      cachedReadAudioTokens: 200,
      cacheWriteTokens: 800,
      cacheWrite1hTokens: 300,
      promptAudioTokens: 700,
      promptImageTokens: 400,
      completionAudioTokens: 500,
      completionImageTokens: 250,
      reasoningTokens: 900,
      additionalUnits: { web_search: 2, file_search: 1, unknown_unit: 3 },
      images: { count: 2, quality: 'hd', size: '1024x1024' },
    },
    { promptTokens: 10, completionTokens: 10, cachedReadTokens: 50, reasoningTokens: 40 },
  ];
  const optionSets = [{}, { mode: 'batch' }, { mode: 'priority' }, { region: 'eu-west-2' }];

  it('equals computeCost(...).amount for every model of the shipped catalog', () => {
    let compared = 0;
    for (const model of catalog.listModels()) {
      const pricing = catalog.getModelPricing(model.provider, model.id);
      for (const usage of usages) {
        for (const options of optionSets) {
          expect([model.provider, model.id, computeCostAmount(pricing, usage, options)]).toEqual([
            model.provider,
            model.id,
            computeCost(pricing, usage, options)?.amount ?? null,
          ]);
          compared += 1;
        }
      }
    }
    expect(compared).toBeGreaterThan(2500 * usages.length * optionSets.length);
  });

  it('equals computeCost with adjustments, custom pricing and formulas it cannot trust', () => {
    const base = catalog.getModelPricing('openai', 'gpt-4o-mini');
    const custom = (calculate: unknown) =>
      resolvePricing(null, {
        pricingConfig: { pay_as_you_go: { request_token: { price: 0.001 } }, calculate },
      });
    const pricings = [
      resolvePricing(base, { multiplier: { default: 0.8, response_token: 0.5 } }),
      resolvePricing(base, { rates: { request_token: 0.002 } }),
      custom({ request: { value: 'input_tokens' }, response: { value: 'unknown_tokens' } }),
      custom({
        request: { operation: 'multiply', operands: [{ value: '2' }, { value: 'rates.request_token' }] },
        response: { operation: 'sum', operands: [] },
      }),
    ];
    for (const pricing of pricings) {
      for (const usage of usages) {
        expect(computeCostAmount(pricing, usage)).toEqual(computeCost(pricing, usage)?.amount ?? null);
      }
    }
    expect(computeCostAmount(pricings[2], usages[0])).toBeNull();
    expect(computeCostAmount(null, usages[0])).toBeNull();
  });
});
