import { computeCost, getModelPricing, resolvePricing } from './catalog';
import {
  adjustmentsToOverride,
  checkPricingConfig,
  pricingConfigToOverride,
  toPricingResponse,
} from './pricing-overrides';

describe('pricing adjustments', () => {
  it('the reference shape maps onto the cost function, image and per-unit multipliers included', () => {
    expect(
      adjustmentsToOverride({
        multiplier: {
          default: 0.8,
          request_token: null,
          image: { default: 0.5 },
          additional_units: { web_search: 2 },
        },
      }),
    ).toEqual({ multiplier: { default: 0.8, image: 0.5, 'additional_units.web_search': 2 } });
    expect(adjustmentsToOverride(null)).toBeNull();
    expect(adjustmentsToOverride({ multiplier: {} })).toBeNull();
  });

  it('web searches follow their own multiplier, tokens the default', () => {
    const base = getModelPricing('openai', 'gpt-4o')!;
    const adjusted = resolvePricing(
      base,
      adjustmentsToOverride({ multiplier: { default: 0.5, additional_units: { web_search: 3 } } }),
    );
    // 1000 × 0.00025 × 0.5 = 0.125; 2 searches × 1 × 3 = 6
    const cost = computeCost(adjusted, { promptTokens: 1000, additionalUnits: { web_search: 2 } });
    expect(cost!.cents).toBeCloseTo(6.125, 9);
  });

  it('images follow the image multiplier', () => {
    const base = getModelPricing('openai', 'dall-e-3')!;
    const plain = computeCost(base, { images: { count: 1, quality: 'standard', size: '1024x1024' } })!.cents;
    const adjusted = resolvePricing(
      base,
      adjustmentsToOverride({ multiplier: { default: 0.9, image: { default: 0.5 } } }),
    );
    expect(
      computeCost(adjusted, { images: { count: 1, quality: 'standard', size: '1024x1024' } })!.cents,
    ).toBeCloseTo(plain * 0.5, 9);
  });
});

describe('custom pricing', () => {
  it('refuses prices the cost function could not use, naming the field', () => {
    expect(() =>
      checkPricingConfig({ pay_as_you_go: { request_token: { price: -1 } } }, 'models[0].pricing_config'),
    ).toThrow(expect.objectContaining({ param: 'models[0].pricing_config' }));
    expect(() =>
      checkPricingConfig(
        {
          pay_as_you_go: { request_token: { price: 0.1 } },
          calculate: { request: { value: 'mystery_tokens' }, response: { value: 'output_tokens' } },
        },
        'p',
      ),
    ).toThrow(/mystery_tokens/);
    expect(() =>
      checkPricingConfig({ pay_as_you_go: { request_token: { price: 0.1 } }, currency: 'EUR' }, 'p'),
    ).toThrow(/USD/);
    expect(() => checkPricingConfig({ pay_as_you_go: { request_token: { price: 0.1 } } }, 'p')).not.toThrow();
  });

  it('answers in the reference shape with adjustments applied', () => {
    const custom = resolvePricing(
      null,
      pricingConfigToOverride({
        pay_as_you_go: { request_token: { price: 0.001 }, response_token: { price: 0.002 } },
      }),
      {
        provider: 'openai',
        model: 'my-model',
      },
    )!;
    expect(toPricingResponse(custom)).toMatchObject({
      provider: 'openai',
      model: 'my-model',
      source: 'custom',
      pay_as_you_go: { request_token: { price: 0.001 }, response_token: { price: 0.002 } },
      currency: 'USD',
    });
    const tiered = toPricingResponse(getModelPricing('google', 'gemini-2.5-pro')!);
    expect(tiered.context_tiers?.[0].above_input_tokens).toBe(128000);
    expect(tiered.context_tiers?.[0].pay_as_you_go.request_token).toBeDefined();
  });
});
