import { validateRequestBody } from './request-validation';

const chat = (extra: Record<string, unknown>) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});
const completion = (extra: Record<string, unknown>) => ({
  model: 'gpt-3.5-turbo-instruct',
  prompt: 'hi',
  ...extra,
});

function paramOf(fn: () => void): string | null {
  try {
    fn();
  } catch (error) {
    return (error as { param: string }).param;
  }
  return null;
}

describe('validateRequestBody: chat completions', () => {
  it('accepts a minimal valid body and unknown fields', () => {
    expect(() => validateRequestBody('chat.completions', chat({ custom_field: 1 }))).not.toThrow();
  });

  it.each([
    [{ messages: [] }, 'messages'],
    [{ n: 0 }, 'n'],
    [{ n: 129 }, 'n'],
    [{ n: 1.5 }, 'n'],
    [{ temperature: 2.1 }, 'temperature'],
    [{ temperature: -0.1 }, 'temperature'],
    [{ top_p: 1.01 }, 'top_p'],
    [{ frequency_penalty: -2.5 }, 'frequency_penalty'],
    [{ presence_penalty: 3 }, 'presence_penalty'],
    [{ logit_bias: { '50256': -101 } }, 'logit_bias.50256'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ tools: Array.from({ length: 129 }, () => ({ type: 'function' })) }, 'tools'],
    [{ functions: [] }, 'functions'],
    [{ top_logprobs: 5 }, 'top_logprobs'],
    [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
    [{ max_tokens: -1 }, 'max_tokens'],
    [{ seed: 2 ** 64 }, 'seed'],
    [{ stream_options: { include_usage: true } }, 'stream_options'],
    [{ model: '' }, 'model'],
  ])('rejects %j naming %s', (extra, param) => {
    expect(paramOf(() => validateRequestBody('chat.completions', chat(extra)))).toBe(param);
  });

  it('accepts the edges of every range', () => {
    const body = chat({
      n: 128,
      temperature: 2,
      top_p: 0,
      frequency_penalty: -2,
      presence_penalty: 2,
      logit_bias: { 1: 100, 2: -100 },
      stop: ['a', 'b', 'c', 'd'],
      logprobs: true,
      top_logprobs: 20,
      max_tokens: 0,
      seed: -(2 ** 53),
      stream: true,
      stream_options: { include_usage: true },
      tools: Array.from({ length: 128 }, () => ({ type: 'function' })),
    });
    expect(() => validateRequestBody('chat.completions', body)).not.toThrow();
  });
});

describe('validateRequestBody: text completions', () => {
  it.each([
    [{ logprobs: 6 }, 'logprobs'],
    [{ best_of: 21 }, 'best_of'],
    [{ best_of: 2, n: 2 }, 'best_of'],
    [{ best_of: 3, stream: true }, 'best_of'],
    [{ prompt: undefined }, 'prompt'],
    [{ max_tokens: -5 }, 'max_tokens'],
  ])('rejects %j naming %s', (extra, param) => {
    expect(paramOf(() => validateRequestBody('completions', completion(extra)))).toBe(param);
  });

  it('accepts best_of greater than n and logprobs up to 5', () => {
    expect(() =>
      validateRequestBody('completions', completion({ best_of: 3, n: 2, logprobs: 5 })),
    ).not.toThrow();
  });
});
