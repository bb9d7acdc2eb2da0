import { makeContext } from '../testing/context';
import { utf8 } from '../testing/bytes';
import { ProviderRequestError } from '../shared/errors';
import { openAiAdapter } from './openai.adapter';

describe('openai adapter', () => {
  it('sends chat completions with bearer auth, organisation and project headers, and the body as is', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true };
    const request = await openAiAdapter.buildRequest(
      makeContext({
        body,
        stream: true,
        credentials: { apiKey: 'sk-1', openaiOrganization: 'org-9', openaiProject: 'proj_2' },
        forwardHeaders: { 'X-Trace': 'abc', Authorization: 'Bearer client-should-not-win' },
      }),
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'https://api.openai.com/v1/chat/completions',
      headers: {
        'x-trace': 'abc',
        authorization: 'Bearer sk-1',
        'content-type': 'application/json',
        'openai-organization': 'org-9',
        'openai-project': 'proj_2',
      },
      body: JSON.stringify(body),
    });
    expect(openAiAdapter.isOpenAiNative('chat.completions')).toBe(true);
  });

  it('forwards a multipart upload intact with its content type', async () => {
    const raw = utf8('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--b--\r\n');
    const request = await openAiAdapter.buildRequest(
      makeContext({
        route: 'audio.transcriptions',
        path: '/audio/transcriptions',
        rawBody: raw,
        rawContentType: 'multipart/form-data; boundary=b',
      }),
    );
    expect(request.url).toBe('https://api.openai.com/v1/audio/transcriptions');
    expect(request.headers['content-type']).toBe('multipart/form-data; boundary=b');
    expect(request.body).toBe(raw);
  });

  it('forwards the proxy route with its method, path and query', async () => {
    const request = await openAiAdapter.buildRequest(
      makeContext({ route: 'openai.proxy', method: 'GET', path: '/files/file-abc/content?limit=2' }),
    );
    expect(request).toEqual({
      method: 'GET',
      url: 'https://api.openai.com/v1/files/file-abc/content?limit=2',
      headers: { authorization: 'Bearer sk-test' },
    });
    const del = await openAiAdapter.buildRequest(
      makeContext({ route: 'openai.proxy', method: 'DELETE', path: '/files/file-abc' }),
    );
    expect(del.method).toBe('DELETE');
    expect(del.body).toBeUndefined();
  });

  it('retrieves a model by the path the caller used and honours a custom host', async () => {
    const request = await openAiAdapter.buildRequest(
      makeContext({
        route: 'models.retrieve',
        method: 'GET',
        path: '/models/gpt-4o',
        credentials: { apiKey: 'k', customHost: 'http://proxy.internal:8080/v1/' },
      }),
    );
    expect(request.url).toBe('http://proxy.internal:8080/v1/models/gpt-4o');
  });

  it('returns answers untouched and reads their usage', () => {
    const answer = { id: 'chatcmpl-1', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
    expect(openAiAdapter.transformResponse(makeContext(), answer)).toBe(answer);
    expect(openAiAdapter.extractUsage?.('chat.completions', answer)).toEqual({
      prompt_tokens: 3,
      completion_tokens: 1,
      total_tokens: 4,
    });
  });

  it('rejects routes OpenAI does not serve and a missing key', () => {
    expect(() => openAiAdapter.buildRequest(makeContext({ route: 'rerank' }))).toThrow(ProviderRequestError);
    expect(() => openAiAdapter.buildRequest(makeContext({ credentials: {} }))).toThrow(
      'OpenAI needs an API key',
    );
  });

  it('keeps the OpenAI error envelope', () => {
    expect(
      openAiAdapter.transformError(429, {
        error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
      }),
    ).toEqual({ message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' });
  });
});
