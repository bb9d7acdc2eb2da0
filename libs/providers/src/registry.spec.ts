import { getProviderAdapter, listProviderAdapters, listProviderIds } from './registry';
import { makeContext } from './testing/context';

describe('provider registry', () => {
  it('registers at least 40 providers with unique ids', () => {
    const ids = listProviderIds();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(40);
  });

  it('includes the translated providers of both adapter sets', () => {
    for (const id of [
      'openai',
      'azure-openai',
      'anthropic',
      'cohere',
      'google',
      'vertex-ai',
      'bedrock',
      'groq',
      'mistral-ai',
    ]) {
      expect(getProviderAdapter(id)?.id).toBe(id);
    }
  });

  it('resolves aliases and case, and answers undefined for an unknown provider', () => {
    expect(getProviderAdapter('xai')?.id).toBe('x-ai');
    expect(getProviderAdapter('OpenAI')?.id).toBe('openai');
    expect(getProviderAdapter('no-such-provider')).toBeUndefined();
  });

  it('gives every adapter a display name, routes and a consistent native flag', () => {
    for (const adapter of listProviderAdapters()) {
      expect(adapter.displayName.length).toBeGreaterThan(0);
      expect(adapter.routes.size).toBeGreaterThan(0);
      for (const route of adapter.routes) expect(typeof adapter.isOpenAiNative(route)).toBe('boolean');
    }
  });

  it('returns error envelopes from every adapter for an OpenAI-style error body', () => {
    for (const adapter of listProviderAdapters()) {
      const error = adapter.transformError(401, {
        error: { message: 'bad key', type: 'authentication_error' },
      });
      expect(error.message).toBe('bad key');
    }
    expect(makeContext().route).toBe('chat.completions');
  });
});
