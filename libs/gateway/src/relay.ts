import type { Writable } from 'node:stream';

/** The client's side of a relay: the response, whose `drain` and `close` say when to go on. */
export type RelayTarget = Pick<Writable, 'on' | 'off' | 'destroyed' | 'writableEnded'>;

/**
 * Resolves when the client can take more (`drain`) or has gone (`close`), so that a client that
 * hangs up while the gateway waits for it never leaves the request waiting for ever.
 */
export function drained(target: RelayTarget): Promise<void> {
  if (target.destroyed || target.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      target.off('drain', done);
      target.off('close', done);
      resolve();
    };
    target.on('drain', done);
    target.on('close', done);
  });
}
