import { AsyncLocalStorage, AsyncResource, executionAsyncId } from 'node:async_hooks';
import { applyRuntimeFixes } from './runtime-fixes';

describe('AsyncResource#bind without the deprecated accessor', () => {
  const original = AsyncResource.prototype.bind;
  beforeAll(() => applyRuntimeFixes());
  afterAll(() => {
    AsyncResource.prototype.bind = original;
  });

  it('runs fn in the resource’s async scope with the arguments and return value', () => {
    const storage = new AsyncLocalStorage<string>();
    const resource = storage.run('inside', () => new AsyncResource('test'));
    const bound = resource.bind(
      (a: number, b: number) => `${storage.getStore()}:${a + b}:${executionAsyncId()}`,
    );
    const answer = storage.run('outside', () => bound(2, 3));
    expect(answer).toBe(`inside:5:${resource.asyncId()}`);
  });

  it('keeps the caller’s this, or thisArg when given, and fn’s length', () => {
    const resource = new AsyncResource('test');
    function whoAmI(this: { name: string } | undefined, _a: unknown, _b: unknown) {
      return this?.name;
    }
    const bound = resource.bind(whoAmI);
    expect(bound.call({ name: 'caller' }, 1, 2)).toBe('caller');
    const withThis = (resource.bind as (fn: typeof whoAmI, thisArg: unknown) => typeof whoAmI)(whoAmI, {
      name: 'fixed',
    });
    expect(withThis.call({ name: 'caller' }, 1, 2)).toBe('fixed');
    expect(bound.length).toBe(2);
  });

  it('no longer defines the deprecated asyncResource accessor, and still refuses a non-function', () => {
    const bound = new AsyncResource('test').bind(() => 1);
    expect(Object.prototype.hasOwnProperty.call(bound, 'asyncResource')).toBe(false);
    expect(() => new AsyncResource('test').bind(42 as unknown as () => void)).toThrow(TypeError);
  });

  it('AsyncResource.bind (the static) goes through it too', () => {
    const storage = new AsyncLocalStorage<number>();
    const bound = storage.run(7, () => AsyncResource.bind(() => storage.getStore()));
    expect(bound()).toBe(7);
  });
});
