import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { RelayTarget, drained, relayBody } from './relay';

/** A client connection the test drives: `drain` and `close` are emitted by hand. */
function client(): RelayTarget & EventEmitter & { destroyed: boolean; writableEnded: boolean } {
  return Object.assign(new EventEmitter(), { destroyed: false, writableEnded: false }) as never;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('relayBody', () => {
  it('hands over every chunk in order and resolves at the end', async () => {
    const body = new PassThrough();
    const seen: string[] = [];
    const done = relayBody(body, client(), (chunk) => {
      seen.push(chunk.toString());
      return true;
    });
    body.write('a');
    body.write('b');
    body.end('c');
    await done;
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('pauses the body while the client is behind and goes on at drain', async () => {
    const body = new PassThrough();
    const target = client();
    const seen: string[] = [];
    const done = relayBody(body, target, (chunk) => {
      seen.push(chunk.toString());
      return seen.length !== 1;
    });
    body.write('first');
    await tick();
    body.write('second');
    await tick();
    expect(seen).toEqual(['first']);
    expect(body.isPaused()).toBe(true);
    target.emit('drain');
    await tick();
    expect(seen).toEqual(['first', 'second']);
    body.end();
    await done;
    expect(target.listenerCount('drain')).toBe(0);
    expect(target.listenerCount('close')).toBe(0);
  });

  it('does not wait for ever on a client that hangs up while behind', async () => {
    const body = new PassThrough();
    const target = client();
    const done = relayBody(body, target, () => false);
    body.write('x');
    await tick();
    target.emit('close');
    // Upstream aborted because the client left: the body errors and the relay ends with it.
    body.destroy(new Error('aborted'));
    await expect(done).rejects.toThrow('aborted');
  });

  it('rejects with the body error', async () => {
    const body = new PassThrough();
    const done = relayBody(body, client(), () => true);
    body.write('x');
    body.destroy(new Error('socket hang up'));
    await expect(done).rejects.toThrow('socket hang up');
  });

  it('rejects when the body closes before its end', async () => {
    const body = new PassThrough();
    const done = relayBody(body, client(), () => true);
    body.destroy();
    await expect(done).rejects.toThrow('closed before its end');
  });

  it('stops the body when a chunk cannot be handled, without an unhandled error', async () => {
    const body = new PassThrough();
    const done = relayBody(body, client(), () => {
      throw new Error('bad chunk');
    });
    body.write('x');
    await expect(done).rejects.toThrow('bad chunk');
    await tick();
    expect(body.destroyed).toBe(true);
  });
});

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
