import { EventEmitter } from 'node:events';
import { RelayTarget, drained } from './relay';

/** A client connection the test drives: `drain` and `close` are emitted by hand. */
function client(): RelayTarget & EventEmitter & { destroyed: boolean; writableEnded: boolean } {
  return Object.assign(new EventEmitter(), { destroyed: false, writableEnded: false }) as never;
}

describe('drained', () => {
  it('resolves at drain, at close, or at once for a finished client', async () => {
    const target = client();
    const onDrain = drained(target);
    target.emit('drain');
    await expect(onDrain).resolves.toBeUndefined();

    const onClose = drained(target);
    target.emit('close');
    await expect(onClose).resolves.toBeUndefined();
    expect(target.listenerCount('drain') + target.listenerCount('close')).toBe(0);

    target.destroyed = true;
    await expect(drained(target)).resolves.toBeUndefined();
  });
});
