import type { PricingExpression } from './catalog.types';

/**
 * A small evaluator for the catalog's `calculate` trees. It never uses `eval`: the only operations
 * are `sum` and `multiply`, leaves are numeric literals or names resolved by the caller. Custom
 * formulas can come from operators, so depth is bounded and unknown names are an error rather than
 * a silent zero (a zero would read as a real price).
 */

export class UnknownPricingReferenceError extends Error {
  constructor(readonly reference: string) {
    super(`pricing formula refers to unknown value "${reference}"`);
    this.name = 'UnknownPricingReferenceError';
  }
}

export const MAX_DEPTH = 32;
export const NUMERIC_LITERAL = /^-?\d+(\.\d+)?$/;

/** A `multiply(quantity, rates.x)` pair seen during evaluation, for the cost breakdown. */
export interface ExpressionProduct {
  readonly quantityName: string;
  readonly quantity: number;
  readonly rateName: string;
  readonly rate: number;
  readonly value: number;
}

export type ValueResolver = (name: string) => number | undefined;

export function evaluateExpression(
  expression: PricingExpression,
  resolve: ValueResolver,
  onProduct?: (product: ExpressionProduct) => void,
  depth = 0,
): number {
  if (depth > MAX_DEPTH) throw new RangeError('pricing formula is nested too deeply');
  if ('value' in expression) {
    if (NUMERIC_LITERAL.test(expression.value)) return Number(expression.value);
    const resolved = resolve(expression.value);
    if (resolved === undefined) throw new UnknownPricingReferenceError(expression.value);
    return resolved;
  }
  const values = expression.operands.map((operand) =>
    evaluateExpression(operand, resolve, onProduct, depth + 1),
  );
  if (expression.operation === 'sum') return values.reduce((total, value) => total + value, 0);
  const product = values.reduce((total, value) => total * value, 1);
  if (onProduct && expression.operands.length === 2) {
    const [left, right] = expression.operands;
    if ('value' in left && 'value' in right) {
      const rateFirst = left.value.startsWith('rates.');
      const [quantityNode, rateNode] = rateFirst ? [right, left] : [left, right];
      if (rateNode.value.startsWith('rates.') && !quantityNode.value.startsWith('rates.')) {
        onProduct({
          quantityName: quantityNode.value,
          quantity: rateFirst ? values[1] : values[0],
          rateName: rateNode.value.slice('rates.'.length),
          rate: rateFirst ? values[0] : values[1],
          value: product,
        });
      }
    }
  }
  return product;
}

/** Every name the expression reads (literals excluded). */
export function referencedValues(expression: PricingExpression, into = new Set<string>()): Set<string> {
  if ('value' in expression) {
    if (!NUMERIC_LITERAL.test(expression.value)) into.add(expression.value);
  } else {
    for (const operand of expression.operands) referencedValues(operand, into);
  }
  return into;
}
