import { AsyncResource } from 'node:async_hooks';

const kPatched = Symbol.for('switchboard.asyncResourceBindPatched');

/**
 * Node 20's `AsyncResource#bind` gives every bound function a deprecated `asyncResource`
 * accessor (DEP0172) made of two `deprecate()` wrappers, each of which calls
 * `Object.setPrototypeOf` on a fresh function. Fastify binds one resource per request body it
 * parses, so on the data plane this costs a few microseconds and, worse, leaves objects that V8
 * keeps through young-generation collections: measured here, 40 MB of the 8-second survivors of a
 * 500 req/s run were these, against 16 MB for everything else. Survivors are what make scavenges
 * slow (the p99) and fill the old generation (the RSS).
 *
 * This replaces the method with one that does the same thing without the deprecated accessor:
 * the bound function runs `fn` in the resource's async scope with the caller's `this` (or
 * `thisArg`) and arguments, and has `fn`'s length. Applied once, at start, by main.ts only; Node
 * versions whose `bind` has no such accessor are left alone.
 */
export function applyRuntimeFixes(): void {
  const prototype = AsyncResource.prototype as AsyncResource & { [kPatched]?: boolean };
  if (prototype[kPatched]) return;
  const probe = new AsyncResource('switchboard-probe').bind(() => undefined) as unknown as object;
  if (!Object.prototype.hasOwnProperty.call(probe, 'asyncResource')) return;

  prototype.bind = function bind<Func extends (...args: never[]) => unknown>(
    this: AsyncResource,
    fn: Func,
    thisArg?: unknown,
  ): Func {
    if (typeof fn !== 'function') throw new TypeError('The "fn" argument must be of type function');
    const run = this.runInAsyncScope.bind(this) as (fn: Func, self: unknown, ...args: unknown[]) => unknown;
    const bound =
      thisArg === undefined
        ? function (this: unknown, ...args: unknown[]) {
            return run(fn, this, ...args);
          }
        : (...args: unknown[]) => run(fn, thisArg, ...args);
    Object.defineProperty(bound, 'length', {
      configurable: true,
      enumerable: false,
      value: fn.length,
      writable: false,
    });
    return bound as unknown as Func;
  };
  prototype[kPatched] = true;
}
