import { EventEmitter } from 'node:events';
import type { RelayTarget } from './relay';
import { BodyController, UNREAD_HIGH_WATER_BYTES, UpstreamBody } from './upstream-body';

/** undici's side, as the body sees it: whether it is paused, and why it was aborted. */
function controller(): BodyController & { paused: boolean; abortedWith: Error | null } {
  const state = {
    paused: false,
    abortedWith: null as Error | null,
    pause: () => {
      state.paused = true;
    },
    resume: () => {
      state.paused = false;
    },
    abort: (reason: Error) => {
      state.abortedWith = reason;
    },
  };
  return state;
}

/** The client connection: `drain` and `close` are emitted by the test. */
function clientConnection(): RelayTarget & EventEmitter {
  return Object.assign(new EventEmitter(), { destroyed: false, writableEnded: false }) as never;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('UpstreamBody.read', () => {
  it('resolves with every chunk, those before the read included, at the end', async () => {
    const body = new UpstreamBody(controller());
    body.push(Buffer.from('{"a":'));
    const whole = body.read();
    body.push(Buffer.from('1}'));
    body.end();
    expect((await whole).toString()).toBe('{"a":1}');
    expect(body.finished).toBe(true);
  });

  it('resolves at once for a body that has already ended', async () => {
    const body = new UpstreamBody(controller());
    body.push(Buffer.from('done'));
    body.end();
    expect((await body.read()).toString()).toBe('done');
  });

  it('rejects with the call error, before or after the read', async () => {
    const early = new UpstreamBody(controller());
    early.fail(new Error('socket hang up'));
    await expect(early.read()).rejects.toThrow('socket hang up');

    const late = new UpstreamBody(controller());
    const whole = late.read();
    late.push(Buffer.from('part'));
    late.fail(new Error('other side closed'));
    await expect(whole).rejects.toThrow('other side closed');
  });

  it('pauses an unread body past the high-water mark and resumes for the reader', async () => {
    const undici = controller();
    const body = new UpstreamBody(undici);
    body.push(Buffer.alloc(UNREAD_HIGH_WATER_BYTES));
    expect(undici.paused).toBe(false);
    body.push(Buffer.alloc(1));
    expect(undici.paused).toBe(true);
    const whole = body.read();
    expect(undici.paused).toBe(false);
    body.end();
    expect((await whole).length).toBe(UNREAD_HIGH_WATER_BYTES + 1);
  });

  it('is read once', async () => {
    const body = new UpstreamBody(controller());
    body.end();
    await body.read();
    expect(() => body.read()).toThrow('read only once');
    expect(() => body.relay(clientConnection(), () => true)).toThrow('read only once');
  });
});

describe('UpstreamBody.relay', () => {
  it('hands over every chunk in order, the waiting ones first, and resolves at the end', async () => {
    const body = new UpstreamBody(controller());
    const seen: string[] = [];
    body.push(Buffer.from('a'));
    const done = body.relay(clientConnection(), (chunk) => {
      seen.push(chunk.toString());
      return true;
    });
    expect(seen).toEqual(['a']);
    body.push(Buffer.from('b'));
    body.push(Buffer.from('c'));
    body.end();
    await done;
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('pauses the upstream while the client is behind and goes on at drain', async () => {
    const undici = controller();
    const body = new UpstreamBody(undici);
    const client = clientConnection();
    const seen: string[] = [];
    const done = body.relay(client, (chunk) => {
      seen.push(chunk.toString());
      return seen.length !== 1;
    });
    body.push(Buffer.from('first'));
    expect(undici.paused).toBe(true);
    client.emit('drain');
    await tick();
    expect(undici.paused).toBe(false);
    body.push(Buffer.from('second'));
    body.end();
    await done;
    expect(seen).toEqual(['first', 'second']);
    expect(client.listenerCount('drain') + client.listenerCount('close')).toBe(0);
  });

  it('pauses when the waiting chunks already fill the client', async () => {
    const undici = controller();
    const body = new UpstreamBody(undici);
    const client = clientConnection();
    body.push(Buffer.from('x'));
    const done = body.relay(client, () => false);
    expect(undici.paused).toBe(true);
    client.emit('drain');
    await tick();
    expect(undici.paused).toBe(false);
    body.end();
    await done;
  });

  it('does not wait for ever on a client that hangs up while behind', async () => {
    const body = new UpstreamBody(controller());
    const client = clientConnection();
    const done = body.relay(client, () => false);
    body.push(Buffer.from('x'));
    client.emit('close');
    // The gateway aborts the call when its client leaves: the body fails and the relay ends.
    body.fail(new Error('aborted'));
    await expect(done).rejects.toThrow('aborted');
  });

  it('rejects with the call error, and for a body that failed before the relay', async () => {
    const body = new UpstreamBody(controller());
    const done = body.relay(clientConnection(), () => true);
    body.push(Buffer.from('x'));
    body.fail(new Error('socket hang up'));
    await expect(done).rejects.toThrow('socket hang up');

    const failed = new UpstreamBody(controller());
    failed.fail(new Error('reset'));
    await expect(failed.relay(clientConnection(), () => true)).rejects.toThrow('reset');
  });

  it('aborts the call with what a chunk handler threw', async () => {
    const undici = controller();
    const body = new UpstreamBody(undici);
    const done = body.relay(clientConnection(), () => {
      throw new Error('bad chunk');
    });
    body.push(Buffer.from('x'));
    await expect(done).rejects.toThrow('bad chunk');
    expect(undici.abortedWith?.message).toBe('bad chunk');
    // What undici reports afterwards changes nothing.
    body.fail(new Error('aborted'));
    body.end();
  });
});

describe('UpstreamBody.destroy', () => {
  it('aborts a call still going and leaves a finished one alone', () => {
    const going = controller();
    new UpstreamBody(going).destroy(new Error('unread'));
    expect(going.abortedWith?.message).toBe('unread');

    const ended = controller();
    const body = new UpstreamBody(ended);
    body.end();
    body.destroy(new Error('unread'));
    expect(ended.abortedWith).toBeNull();
  });
});
