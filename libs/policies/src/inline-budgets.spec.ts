import { inlineBudgetKeys } from './inline-budgets';

describe('inline budget keys', () => {
  it('keys a budget as the enforcer keys its counter row: kind, owner, type and reset rule', () => {
    expect(
      inlineBudgetKeys('api_key', 'k1', { credit_limit: 30, type: 'tokens', periodic_reset: 'weekly' }),
    ).toEqual([
      {
        policyKey: 'inline:api_key:k1:tokens:weekly',
        valueKey: 'api_key:k1',
        type: 'tokens',
        limitUnits: 30,
      },
    ]);
    expect(inlineBudgetKeys('provider', 'p1', { credit_limit: 0.5, periodic_reset_days: 7 })).toEqual([
      {
        policyKey: 'inline:provider:p1:cost:days:7',
        valueKey: 'provider:p1',
        type: 'cost',
        limitUnits: 50_000_000,
      },
    ]);
  });

  it('declares one budget per type and rule, the lowest credit limit governing', () => {
    const keys = inlineBudgetKeys('api_key', 'k1', [
      { credit_limit: 100, type: 'tokens' },
      { credit_limit: 40, type: 'tokens' },
      { credit_limit: 60, type: 'tokens' },
      { credit_limit: 2, type: 'cost', periodic_reset: 'monthly' },
    ]);
    expect(keys.map((key) => [key.policyKey, key.limitUnits])).toEqual([
      ['inline:api_key:k1:tokens:none', 40],
      ['inline:api_key:k1:cost:monthly', 200_000_000],
    ]);
  });

  it('a limit without a credit limit, or no limits at all, declares no budget', () => {
    expect(inlineBudgetKeys('api_key', 'k1', { credit_limit: null, type: 'tokens' })).toEqual([]);
    expect(inlineBudgetKeys('api_key', 'k1', { alert_threshold: 5 })).toEqual([]);
    expect(inlineBudgetKeys('api_key', 'k1', null)).toEqual([]);
    expect(inlineBudgetKeys('api_key', 'k1', [])).toEqual([]);
  });
});
