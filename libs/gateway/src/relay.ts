import type { Readable, Writable } from 'node:stream';

function ignore(): void {}

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

/**
 * Feeds an upstream body to `onChunk` as its `data` events arrive: no async iterator, so no
 * promise and no microtask per chunk, and each chunk goes on in the tick it was read.
 *
 * `onChunk` answers whether the client took the chunk without buffering it; when it did not, the
 * body pauses until the client drains (or closes). Resolves at the body's end. Rejects with the
 * body's error (an aborted upstream call, a dropped connection), with what `onChunk` threw (the
 * body is then destroyed, which ends the upstream call), or when the body closes before its end.
 */
export function relayBody(
  body: Readable,
  target: RelayTarget,
  onChunk: (chunk: Buffer) => boolean,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const goOn = () => {
      if (!settled) body.resume();
    };
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      // Whatever the body still emits is no longer ours; an error must not go unhandled.
      body.on('error', ignore);
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      let flowing: boolean;
      try {
        flowing = onChunk(chunk);
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        settle(failure);
        body.destroy(failure);
        return;
      }
      if (!flowing && !settled) {
        body.pause();
        void drained(target).then(goOn);
      }
    };
    const onEnd = () => settle();
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(new Error('The upstream body closed before its end'));
    body.on('error', onError);
    body.on('end', onEnd);
    body.on('close', onClose);
    body.on('data', onData);
  });
}
