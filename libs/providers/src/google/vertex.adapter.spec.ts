import { chunkBytes, sse } from '../testing/bytes';
import { ProviderRequestError } from '../shared/errors';
import type { RequestContext } from '../types';
import { vertexAdapter } from './vertex.adapter';

const credentials = {
  vertexProjectId: 'my-project',
  vertexRegion: 'europe-west4',
  vertexAccessToken: 'ya29.token',
};

function ctx(body: Record<string, unknown>, overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    route: 'chat.completions',
    body,
    method: 'POST',
    path: '/chat/completions',
    credentials,
    stream: false,
    includeUsage: false,
    strictOpenAiCompliance: true,
    ...overrides,
  };
}

describe('vertexAdapter (Gemini models)', () => {
  it('calls the regional generateContent endpoint with a bearer token', async () => {
    const request = await vertexAdapter.buildRequest(
      ctx({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
    );
    expect(request).toEqual({
      method: 'POST',
      url:
        'https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4' +
        '/publishers/google/models/gemini-2.5-pro:generateContent',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ya29.token' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        generationConfig: { maxOutputTokens: 10 },
      }),
    });
  });

  it('uses the host without a region prefix for the global location, and SSE for streams', async () => {
    const request = await vertexAdapter.buildRequest(
      ctx(
        { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
        { stream: true, credentials: { ...credentials, vertexRegion: 'global' } },
      ),
    );
    expect(request.url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/my-project/locations/global' +
        '/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });

  it('accepts an explicit publishers/{publisher}/models/{model} id', async () => {
    const request = await vertexAdapter.buildRequest(
      ctx({
        model: 'publishers/google/models/gemini-2.0-flash-001',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(request.url).toMatch(/\/publishers\/google\/models\/gemini-2\.0-flash-001:generateContent$/);
  });

  it('needs a project and a token', () => {
    expect(() =>
      vertexAdapter.buildRequest(
        ctx({ model: 'gemini-2.5-pro', messages: [] }, { credentials: { vertexAccessToken: 't' } }),
      ),
    ).toThrow(ProviderRequestError);
    expect(() =>
      vertexAdapter.buildRequest(
        ctx({ model: 'gemini-2.5-pro', messages: [] }, { credentials: { vertexProjectId: 'p' } }),
      ),
    ).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('translates answers and streams like the Gemini API', () => {
    const answer: any = vertexAdapter.transformResponse(ctx({ model: 'gemini-2.5-pro' }), {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hi!' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
    });
    expect(answer.choices[0].message.content).toBe('Hi!');
    expect(answer.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });

    const translator = vertexAdapter.createStreamTranslator(
      ctx({ model: 'gemini-2.5-pro' }, { stream: true, includeUsage: true }),
    );
    const bytes = chunkBytes(
      sse([
        [undefined, { candidates: [{ content: { parts: [{ text: 'Hi' }] } }] }],
        [
          undefined,
          {
            candidates: [{ content: { parts: [{ text: '!' }] }, finishReason: 'MAX_TOKENS' }],
            usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
          },
        ],
      ]),
      6,
    );
    const out: any[] = [];
    for (const chunk of bytes) out.push(...translator.write(chunk));
    out.push(...translator.end());
    expect(out.map((chunk) => chunk.choices[0]?.delta ?? chunk.usage)).toEqual([
      { role: 'assistant', content: 'Hi' },
      { content: '!' },
      {},
      { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    ]);
    expect(out[2].choices[0].finish_reason).toBe('length');
  });
});

describe('vertexAdapter embeddings', () => {
  const embedCtx = (body: Record<string, unknown>) => ctx(body, { route: 'embeddings', path: '/embeddings' });

  it('calls predict and reads token counts from the statistics', async () => {
    const request = await vertexAdapter.buildRequest(
      embedCtx({ model: 'text-embedding-005', input: ['a', 'b'], dimensions: 128 }),
    );
    expect(request.url).toBe(
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4' +
        '/publishers/google/models/text-embedding-005:predict',
    );
    expect(JSON.parse(request.body as string)).toEqual({
      instances: [{ content: 'a' }, { content: 'b' }],
      parameters: { outputDimensionality: 128 },
    });
    expect(
      vertexAdapter.transformResponse(embedCtx({ model: 'text-embedding-005' }), {
        predictions: [
          { embeddings: { values: [1, 2], statistics: { token_count: 2, truncated: false } } },
          { embeddings: { values: [3, 4], statistics: { token_count: 5, truncated: false } } },
        ],
      }),
    ).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [1, 2] },
        { object: 'embedding', index: 1, embedding: [3, 4] },
      ],
      model: 'text-embedding-005',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
  });
});

describe('vertexAdapter (Claude models)', () => {
  it('calls rawPredict under the anthropic publisher with the Messages body, Vertex version and no model', async () => {
    const request = await vertexAdapter.buildRequest(
      ctx({
        model: 'claude-sonnet-4@20250514',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
        max_tokens: 100,
      }),
    );
    expect(request.url).toBe(
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4' +
        '/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict',
    );
    expect(request.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer ya29.token',
    });
    const body = JSON.parse(request.body as string);
    expect(body).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      system: 'Be brief.',
      max_tokens: 100,
    });
    expect(body.messages).toHaveLength(1);
    expect(body).not.toHaveProperty('model');
    expect(body).not.toHaveProperty('stream');
  });

  it('streams through streamRawPredict with stream: true in the body', async () => {
    const request = await vertexAdapter.buildRequest(
      ctx(
        { model: 'claude-3-5-haiku@20241022', messages: [{ role: 'user', content: 'hi' }] },
        { stream: true },
      ),
    );
    expect(request.url).toMatch(
      /\/publishers\/anthropic\/models\/claude-3-5-haiku@20241022:streamRawPredict$/,
    );
    expect(JSON.parse(request.body as string)).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      stream: true,
    });
  });

  it('translates the Anthropic answer and stream to the OpenAI shape', () => {
    const answer: any = vertexAdapter.transformResponse(ctx({ model: 'claude-sonnet-4@20250514' }), {
      id: 'msg_vrtx_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-20250514',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 3 },
    });
    expect(answer.object).toBe('chat.completion');
    expect(answer.choices[0].message.content).toBe('Hello!');
    expect(answer.choices[0].finish_reason).toBe('stop');
    expect(answer.usage).toEqual({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });

    const stream = sse([
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            id: 'msg_vrtx_01',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-20250514',
            content: [],
            usage: { input_tokens: 10, output_tokens: 1 },
          },
        },
      ],
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo!' } },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'message_delta',
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
    const translator = vertexAdapter.createStreamTranslator(
      ctx({ model: 'claude-sonnet-4@20250514' }, { stream: true, includeUsage: true }),
    );
    const out: any[] = [];
    for (const chunk of chunkBytes(stream, 9)) out.push(...translator.write(chunk));
    out.push(...translator.end());
    const text = out.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Hello!');
    expect(out.some((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toBe(true);
    expect(out[out.length - 1].usage).toEqual({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
  });
});
