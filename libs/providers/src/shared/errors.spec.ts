import { readProviderError } from './errors';

describe('readProviderError', () => {
  it('keeps an OpenAI envelope as is', () => {
    expect(
      readProviderError(400, {
        error: {
          message: 'bad model',
          type: 'invalid_request_error',
          param: 'model',
          code: 'model_not_found',
        },
      }),
    ).toEqual({
      message: 'bad model',
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    });
  });

  it('reads the Anthropic envelope', () => {
    expect(
      readProviderError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ).toEqual({ message: 'Overloaded', type: 'overloaded_error', param: null, code: null });
  });

  it('reads the Google envelope, also wrapped in an array', () => {
    const body = { error: { code: 400, message: 'API key not valid', status: 'INVALID_ARGUMENT' } };
    const expected = {
      message: 'API key not valid',
      type: 'invalid_request_error',
      param: null,
      code: 'INVALID_ARGUMENT',
    };
    expect(readProviderError(400, body)).toEqual(expected);
    expect(readProviderError(400, [body])).toEqual(expected);
  });

  it('reads a string error, a message, a FastAPI detail list and Cloudflare errors', () => {
    expect(readProviderError(401, { error: 'Invalid API key' })).toEqual({
      message: 'Invalid API key',
      type: 'authentication_error',
      param: null,
      code: null,
    });
    expect(readProviderError(429, { id: 'x', message: 'too many tokens' }).message).toBe('too many tokens');
    expect(readProviderError(403, { Message: 'User is not authorized' }).type).toBe('permission_error');
    expect(
      readProviderError(422, { detail: [{ loc: ['body', 'query'], msg: 'field required' }] }).message,
    ).toBe('body.query: field required');
    expect(readProviderError(400, { success: false, errors: [{ code: 7003, message: 'No route' }] })).toEqual(
      {
        message: 'No route',
        type: 'invalid_request_error',
        param: null,
        code: '7003',
      },
    );
  });

  it('uses the text of a non-JSON body and a default message for an empty one', () => {
    expect(readProviderError(502, '<html>Bad gateway</html>').message).toBe('<html>Bad gateway</html>');
    expect(readProviderError(503, '')).toEqual({
      message: 'Upstream request failed with status 503',
      type: 'api_error',
      param: null,
      code: null,
    });
  });
});
