import { UpstreamCancel, splitUrl } from './upstream-client';

describe('splitUrl', () => {
  it('splits origin and path (query kept) like URL does', () => {
    for (const url of [
      'https://api.openai.com/v1/chat/completions',
      'http://127.0.0.1:8080/v1/models?limit=2',
      'https://example.test',
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/a%3Ab/converse',
    ]) {
      const parsed = new URL(url);
      expect(splitUrl(url)).toEqual({
        origin: parsed.origin,
        path: url.slice(parsed.origin.length) || '/',
      });
    }
  });

  it('drops user info from the origin, as URL does', () => {
    expect(splitUrl('http://user:secret@host.test:81/x')).toEqual({
      origin: 'http://host.test:81',
      path: '/x',
    });
  });
});

describe('UpstreamCancel', () => {
  it('aborts once, telling listeners', () => {
    const cancel = new UpstreamCancel();
    const heard = jest.fn();
    cancel.once('abort', heard);
    expect(cancel.aborted).toBe(false);
    cancel.abort();
    cancel.abort();
    expect(cancel.aborted).toBe(true);
    expect(heard).toHaveBeenCalledTimes(1);
  });
});
