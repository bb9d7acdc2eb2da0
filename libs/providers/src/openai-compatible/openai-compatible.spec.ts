import type { GatewayRoute, HttpMethod } from '../types';
import { jsonBody, makeContext } from '../testing/context';
import { chunkBytes, utf8 } from '../testing/bytes';
import { ProviderRequestError } from '../shared/errors';
import { OPENAI_ROUTE_PATHS } from '../shared/http';
import { createOpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { OPENAI_COMPATIBLE_PROVIDERS } from './openai-compatible.providers';

const GET_ROUTES: ReadonlySet<GatewayRoute> = new Set(['models.list', 'models.retrieve']);
const MULTIPART: ReadonlySet<GatewayRoute> = new Set([
  'audio.transcriptions',
  'audio.translations',
  'images.edits',
  'images.variations',
]);

function contextFor(route: GatewayRoute, customHost?: string) {
  const method: HttpMethod = GET_ROUTES.has(route) ? 'GET' : 'POST';
  const path =
    route === 'models.retrieve'
      ? '/models/some-model'
      : route === 'openai.proxy'
        ? '/files'
        : OPENAI_ROUTE_PATHS[route];
  const credentials = { apiKey: 'key-1', ...(customHost ? { customHost } : {}) };
  if (method === 'GET') return makeContext({ route, method, path, credentials });
  if (MULTIPART.has(route)) {
    return makeContext({
      route,
      method,
      path,
      credentials,
      rawBody: utf8('--x--'),
      rawContentType: 'multipart/form-data; boundary=x',
    });
  }
  const body = {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    input: 'hi',
    prompt: 'p',
    query: 'q',
    documents: ['a'],
  };
  return makeContext({ route, method, path, credentials, body });
}

describe('OpenAI-compatible provider table', () => {
  it('has unique lowercase ids and https or localhost base URLs', () => {
    const ids = OPENAI_COMPATIBLE_PROVIDERS.map((provider) => provider.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const provider of OPENAI_COMPATIBLE_PROVIDERS) {
      expect(provider.id).toMatch(/^[a-z0-9][a-z0-9-]*$/);
      expect(provider.baseUrl).toMatch(/^(https:\/\/|http:\/\/localhost:\d+\/)/);
      expect(provider.routes.length).toBeGreaterThan(0);
    }
  });

  describe.each(OPENAI_COMPATIBLE_PROVIDERS.map((provider) => [provider.id, provider] as const))(
    '%s',
    (_id, provider) => {
      const adapter = createOpenAiCompatibleAdapter(provider);
      const host = provider.requiresCustomHost ? 'https://account.example.com/v1' : undefined;
      const base = host ?? provider.baseUrl;

      it.each(provider.routes.map((route) => [route]))('builds a valid %s request', async (route) => {
        const ctx = contextFor(route, host);
        const request = await adapter.buildRequest(ctx);
        const url = new URL(request.url);
        expect(request.url.startsWith(base)).toBe(true);
        expect(url.pathname.length).toBeGreaterThan(1);
        expect(request.method).toBe(ctx.method);
        expect(request.headers.authorization).toBe('Bearer key-1');
        if (ctx.method === 'GET') {
          expect(request.body).toBeUndefined();
        } else if (MULTIPART.has(route)) {
          expect(request.headers['content-type']).toBe('multipart/form-data; boundary=x');
          expect(request.body).toBe(ctx.rawBody);
        } else {
          expect(request.headers['content-type']).toBe('application/json');
          expect(jsonBody(request.body)).toEqual(expect.objectContaining({ model: 'm' }));
        }
        const native = provider.translations?.[route] === undefined;
        expect(adapter.isOpenAiNative(route)).toBe(native);
      });

      it('refuses a route it does not list', () => {
        const missing = (Object.keys(OPENAI_ROUTE_PATHS) as GatewayRoute[]).find(
          (route) => !provider.routes.includes(route),
        );
        if (missing === undefined) return;
        expect(() => adapter.buildRequest(contextFor(missing, host))).toThrow(ProviderRequestError);
      });
    },
  );

  it('requires the custom host where the base URL holds an account id', () => {
    const workers = OPENAI_COMPATIBLE_PROVIDERS.find((provider) => provider.id === 'workers-ai');
    const adapter = createOpenAiCompatibleAdapter(workers!);
    expect(() => adapter.buildRequest(contextFor('chat.completions'))).toThrow(/custom host/);
  });

  it('lets self-hosted servers run without a key and with a custom host', async () => {
    const ollama = createOpenAiCompatibleAdapter(OPENAI_COMPATIBLE_PROVIDERS.find((p) => p.id === 'ollama')!);
    const request = await ollama.buildRequest(
      makeContext({ body: { model: 'llama3' }, credentials: { customHost: 'http://gpu-box:11434/v1' } }),
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'http://gpu-box:11434/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"llama3"}',
    });
    const groq = createOpenAiCompatibleAdapter(OPENAI_COMPATIBLE_PROVIDERS.find((p) => p.id === 'groq')!);
    expect(() => groq.buildRequest(makeContext({ body: {}, credentials: {} }))).toThrow(
      'Groq needs an API key',
    );
  });
});

describe('route translations', () => {
  const find = (id: string) =>
    createOpenAiCompatibleAdapter(OPENAI_COMPATIBLE_PROVIDERS.find((p) => p.id === id)!);

  it('maps Voyage rerank: top_n becomes top_k, object documents become text, data becomes results', async () => {
    const voyage = find('voyage');
    const ctx = makeContext({
      route: 'rerank',
      path: '/rerank',
      body: {
        model: 'rerank-2',
        query: 'capital?',
        documents: ['Paris', { text: 'Berlin' }],
        top_n: 1,
        return_documents: true,
      },
    });
    const request = await voyage.buildRequest(ctx);
    expect(request.url).toBe('https://api.voyageai.com/v1/rerank');
    expect(jsonBody(request.body)).toEqual({
      model: 'rerank-2',
      query: 'capital?',
      documents: ['Paris', 'Berlin'],
      top_k: 1,
      return_documents: true,
    });
    const answer = voyage.transformResponse(ctx, {
      object: 'list',
      data: [{ relevance_score: 0.91, index: 0, document: 'Paris' }],
      model: 'rerank-2',
      usage: { total_tokens: 12 },
    });
    expect(answer).toEqual({
      object: 'list',
      id: expect.stringMatching(/^rerank-/),
      model: 'rerank-2',
      results: [{ index: 0, relevance_score: 0.91, document: { text: 'Paris' } }],
      usage: { prompt_tokens: 12, total_tokens: 12 },
      provider: 'voyage',
    });
  });

  it('maps Jina rerank answers to the gateway shape', () => {
    const jina = find('jina');
    const ctx = makeContext({ route: 'rerank', body: { model: 'jina-reranker-v2-base-multilingual' } });
    expect(
      jina.transformResponse(ctx, {
        model: 'jina-reranker-v2-base-multilingual',
        usage: { total_tokens: 30 },
        results: [
          { index: 1, document: { text: 'b' }, relevance_score: 0.8 },
          { index: 0, relevance_score: 0.1 },
        ],
      }),
    ).toEqual({
      object: 'list',
      id: expect.any(String),
      model: 'jina-reranker-v2-base-multilingual',
      results: [
        { index: 1, relevance_score: 0.8, document: { text: 'b' } },
        { index: 0, relevance_score: 0.1 },
      ],
      usage: { prompt_tokens: 30, total_tokens: 30 },
      provider: 'jina',
    });
  });

  it('maps Nomic embeddings both ways', async () => {
    const nomic = find('nomic');
    const ctx = makeContext({
      route: 'embeddings',
      path: '/embeddings',
      body: { model: 'nomic-embed-text-v1.5', input: 'hello', dimensions: 256 },
    });
    const request = await nomic.buildRequest(ctx);
    expect(request.url).toBe('https://api-atlas.nomic.ai/v1/embedding/text');
    expect(jsonBody(request.body)).toEqual({
      model: 'nomic-embed-text-v1.5',
      texts: ['hello'],
      task_type: 'search_document',
      dimensionality: 256,
    });
    expect(
      nomic.transformResponse(ctx, {
        embeddings: [[0.1, 0.2]],
        usage: { prompt_tokens: 2, total_tokens: 2 },
      }),
    ).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
      model: 'nomic-embed-text-v1.5',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
  });

  it('serves Mistral fill-in-the-middle as text completions, plain and streamed', async () => {
    const mistral = find('mistral-ai');
    const ctx = makeContext({
      route: 'completions',
      path: '/completions',
      stream: true,
      includeUsage: true,
      body: {
        model: 'codestral-latest',
        prompt: 'def f(',
        suffix: 'return x',
        max_tokens: 16,
        seed: 7,
        stream: true,
      },
    });
    const request = await mistral.buildRequest(ctx);
    expect(request.url).toBe('https://api.mistral.ai/v1/fim/completions');
    expect(jsonBody(request.body)).toEqual({
      model: 'codestral-latest',
      prompt: 'def f(',
      suffix: 'return x',
      max_tokens: 16,
      stream: true,
      random_seed: 7,
    });
    expect(mistral.isOpenAiNative('completions')).toBe(false);
    expect(mistral.isOpenAiNative('chat.completions')).toBe(true);

    expect(
      mistral.transformResponse(ctx, {
        id: 'fim-1',
        object: 'chat.completion',
        created: 1700000000,
        model: 'codestral-latest',
        choices: [{ index: 0, message: { role: 'assistant', content: 'x):\n    ' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
      }),
    ).toEqual({
      id: 'fim-1',
      object: 'text_completion',
      created: 1700000000,
      model: 'codestral-latest',
      choices: [{ index: 0, text: 'x):\n    ', logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
    });

    const stream =
      'data: {"id":"fim-2","object":"chat.completion.chunk","model":"codestral-latest","choices":[{"index":0,"delta":{"role":"assistant","content":"x"},"finish_reason":null}]}\n\n' +
      'data: {"id":"fim-2","object":"chat.completion.chunk","model":"codestral-latest","choices":[{"index":0,"delta":{"content":"):"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}\n\n' +
      'data: [DONE]\n\n';
    const translator = mistral.createStreamTranslator(ctx);
    const out: any[] = [];
    for (const chunk of chunkBytes(stream, 9)) out.push(...translator.write(chunk));
    out.push(...translator.end());
    expect(out.map((chunk) => chunk.choices.map((c: any) => c.text).join(''))).toEqual(['x', '):', '']);
    expect(out[1].choices[0].finish_reason).toBe('stop');
    expect(out[2]).toEqual(expect.objectContaining({ id: 'fim-2', object: 'text_completion', choices: [] }));
    expect(out[2].usage).toEqual({ prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 });
    expect(translator.usage()).toEqual({ prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 });
  });
});
