import { chunkBytes, splitAt, sse } from '../testing/bytes';
import type { RequestContext } from '../types';
import { googleAdapter } from './gemini.adapter';
import { ProviderRequestError } from '../shared/errors';

function ctx(body: Record<string, unknown>, overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    route: 'chat.completions',
    body,
    method: 'POST',
    path: '/chat/completions',
    credentials: { apiKey: 'g-key' },
    stream: false,
    includeUsage: false,
    strictOpenAiCompliance: true,
    ...overrides,
  };
}

function feed(
  translator: ReturnType<typeof googleAdapter.createStreamTranslator>,
  chunks: Uint8Array[],
): any[] {
  const out: any[] = [];
  for (const chunk of chunks) out.push(...translator.write(chunk));
  out.push(...translator.end());
  return out;
}

const NOW = new Date('2025-03-01T12:00:00Z');
const CREATED = Math.floor(NOW.getTime() / 1000);

beforeEach(() => {
  jest.useFakeTimers({ now: NOW });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('googleAdapter.buildRequest', () => {
  it('calls generateContent with the API key header and a translated body', async () => {
    const request = await googleAdapter.buildRequest(
      ctx({
        model: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=large' } },
            ],
          },
          { role: 'assistant', content: 'A cat.' },
          { role: 'user', content: 'Sure?' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        max_completion_tokens: 256,
        stop: 'END',
        n: 2,
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
        logprobs: true,
        top_logprobs: 3,
        response_format: { type: 'json_object' },
      }),
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'g-key' },
      body: expect.any(String),
    });
    expect(JSON.parse(request.body as string)).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is in these?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=large' } },
          ],
        },
        { role: 'model', parts: [{ text: 'A cat.' }] },
        { role: 'user', parts: [{ text: 'Sure?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
      generationConfig: {
        stopSequences: ['END'],
        maxOutputTokens: 256,
        temperature: 0.2,
        topP: 0.9,
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.5,
        frequencyPenalty: 0.25,
        responseLogprobs: true,
        logprobs: 3,
        responseMimeType: 'application/json',
      },
    });
  });

  it('streams through streamGenerateContent with alt=sse and honours a custom host', async () => {
    const request = await googleAdapter.buildRequest(
      ctx(
        { model: 'models/gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] },
        { stream: true, credentials: { apiKey: 'k', customHost: 'http://127.0.0.1:9999/v1beta/' } },
      ),
    );
    expect(request.url).toBe(
      'http://127.0.0.1:9999/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse',
    );
  });

  it('translates tools, tool_choice, tool calls and tool results (names recovered from call ids)', async () => {
    const request = await googleAdapter.buildRequest(
      ctx({
        model: 'gemini-2.5-pro',
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
              {
                id: 'call_2',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              strict: true,
              parameters: {
                $schema: 'http://json-schema.org/draft-07/schema#',
                type: 'object',
                properties: { city: { type: 'string' } },
                required: ['city'],
                additionalProperties: false,
              },
            },
          },
          { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'x',
            schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
          },
        },
      }),
    );
    expect(JSON.parse(request.body as string)).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
            { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
            { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather for a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
            { name: 'now' },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: { type: 'object', properties: { a: { type: 'string' } } },
      },
    });
  });

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
  ])('maps tool_choice %s', async (choice, config) => {
    const request = await googleAdapter.buildRequest(
      ctx({
        model: 'gemini-2.5-pro',
        messages: [{ role: 'user', content: 'x' }],
        tools: [
          {
            type: 'function',
            function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } },
          },
        ],
        tool_choice: choice,
      }),
    );
    expect(JSON.parse(request.body as string).toolConfig).toEqual({ functionCallingConfig: config });
  });

  it('maps reasoning_effort to a thinking budget (2.5) or level (3), with thoughts only when not strict', async () => {
    const body = (model: string, strict: boolean) =>
      googleAdapter.buildRequest(
        ctx(
          { model, messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'low' },
          { strictOpenAiCompliance: strict },
        ),
      );
    expect(JSON.parse((await body('gemini-2.5-flash', true)).body as string).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024 },
    });
    expect(JSON.parse((await body('gemini-2.5-flash', false)).body as string).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
    expect(JSON.parse((await body('gemini-3-pro-preview', true)).body as string).generationConfig).toEqual({
      thinkingConfig: { thinkingLevel: 'low' },
    });
  });

  it('rejects a tool result whose call id matches no earlier tool call', () => {
    expect(() =>
      googleAdapter.buildRequest(
        ctx({ model: 'gemini-2.5-pro', messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] }),
      ),
    ).toThrow(ProviderRequestError);
  });

  it('refuses to call without an API key', () => {
    try {
      googleAdapter.buildRequest(
        ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { credentials: {} }),
      );
      throw new Error('expected a throw');
    } catch (error) {
      expect(error).toBeInstanceOf(ProviderRequestError);
      expect((error as ProviderRequestError).status).toBe(401);
    }
  });
});

describe('googleAdapter.transformResponse', () => {
  it('translates a plain answer with usage (thoughts counted as reasoning inside completion tokens)', () => {
    const answer = googleAdapter.transformResponse(ctx({ model: 'gemini-2.5-flash' }), {
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'Hello' }, { text: ' there.' }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 12,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 30,
        cachedContentTokenCount: 8,
        totalTokenCount: 47,
      },
      modelVersion: 'gemini-2.5-flash-001',
      responseId: 'abc123',
    });
    expect(answer).toEqual({
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: CREATED,
      model: 'gemini-2.5-flash-001',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there.', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 35,
        total_tokens: 47,
        prompt_tokens_details: { cached_tokens: 8 },
        completion_tokens_details: { reasoning_tokens: 30 },
      },
    });
    expect(googleAdapter.extractUsage?.('chat.completions', answer)).toEqual({
      prompt_tokens: 12,
      completion_tokens: 35,
      total_tokens: 47,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it('turns function calls into tool_calls with generated ids and JSON-string arguments', () => {
    const answer: any = googleAdapter.transformResponse(ctx({ model: 'gemini-2.5-pro' }), {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
              { functionCall: { name: 'get_time', args: {} } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 10, totalTokenCount: 30 },
    });
    expect(answer.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(answer.model).toBe('gemini-2.5-pro');
    expect(answer.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/),
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: expect.stringMatching(/^call_/),
              type: 'function',
              function: { name: 'get_time', arguments: '{}' },
            },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(answer.choices[0].message.tool_calls[0].id).not.toBe(answer.choices[0].message.tool_calls[1].id);
    expect(answer.usage).toEqual({ prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
  });

  it('keeps thought parts out of strict answers and returns them as content_blocks otherwise', () => {
    const upstream = {
      candidates: [
        {
          content: { parts: [{ text: 'Let me think.', thought: true }, { text: '42' }] },
          finishReason: 'STOP',
        },
      ],
    };
    const strict: any = googleAdapter.transformResponse(ctx({ model: 'm' }), upstream);
    expect(strict.choices[0].message).toEqual({ role: 'assistant', content: '42', refusal: null });
    const loose: any = googleAdapter.transformResponse(
      ctx({ model: 'm' }, { strictOpenAiCompliance: false }),
      upstream,
    );
    expect(loose.choices[0].message).toEqual({
      role: 'assistant',
      content: '42',
      refusal: null,
      content_blocks: [
        { type: 'thinking', thinking: 'Let me think.' },
        { type: 'text', text: '42' },
      ],
    });
  });

  it('maps several candidates, finish reasons, logprobs and a blocked prompt', () => {
    const answer: any = googleAdapter.transformResponse(ctx({ model: 'm' }), {
      candidates: [
        {
          index: 0,
          content: { parts: [{ text: 'Hi' }] },
          finishReason: 'MAX_TOKENS',
          logprobsResult: {
            chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
            topCandidates: [
              {
                candidates: [
                  { token: 'Hi', logProbability: -0.1 },
                  { token: 'Yo', logProbability: -2.5 },
                ],
              },
            ],
          },
        },
        { index: 1, content: { parts: [] }, finishReason: 'SAFETY' },
      ],
    });
    expect(answer.choices.map((choice: any) => choice.finish_reason)).toEqual(['length', 'content_filter']);
    expect(answer.choices[0].logprobs).toEqual({
      content: [
        {
          token: 'Hi',
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [
            { token: 'Hi', logprob: -0.1, bytes: [72, 105] },
            { token: 'Yo', logprob: -2.5, bytes: [89, 111] },
          ],
        },
      ],
      refusal: null,
    });
    const blocked: any = googleAdapter.transformResponse(ctx({ model: 'm' }), {
      promptFeedback: { blockReason: 'SAFETY' },
      usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 },
    });
    expect(blocked.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
  });
});

describe('googleAdapter stream translator', () => {
  const events = sse([
    [
      undefined,
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }],
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'r1',
      },
    ],
    [
      undefined,
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'lo — ünïcode' }] }, index: 0 }],
        modelVersion: 'gemini-2.5-flash',
        responseId: 'r1',
      },
    ],
    [
      undefined,
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '!' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: 9,
          candidatesTokenCount: 6,
          thoughtsTokenCount: 4,
          totalTokenCount: 19,
        },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'r1',
      },
    ],
  ]);
  const base = {
    id: 'chatcmpl-r1',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'gemini-2.5-flash',
  };
  const expected: any[] = [
    {
      ...base,
      choices: [
        { index: 0, delta: { role: 'assistant', content: 'Hel' }, logprobs: null, finish_reason: null },
      ],
    },
    {
      ...base,
      choices: [{ index: 0, delta: { content: 'lo — ünïcode' }, logprobs: null, finish_reason: null }],
    },
    { ...base, choices: [{ index: 0, delta: { content: '!' }, logprobs: null, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
    {
      ...base,
      choices: [],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 10,
        total_tokens: 19,
        completion_tokens_details: { reasoning_tokens: 4 },
      },
    },
  ];

  it.each([1, 3, 7, 64])('yields the same chunks when the bytes arrive %i at a time', (size) => {
    const translator = googleAdapter.createStreamTranslator(
      ctx({ model: 'gemini-2.5-flash' }, { stream: true, includeUsage: true }),
    );
    expect(feed(translator, chunkBytes(events, size))).toEqual(expected);
    expect(translator.usage()).toEqual(expected[4].usage);
  });

  it('omits the usage chunk without include_usage and handles CRLF events split inside the separator', () => {
    const crlf = events.replace(/\n/g, '\r\n');
    const cut = crlf.indexOf('\r\n\r\n') + 1;
    const translator = googleAdapter.createStreamTranslator(
      ctx({ model: 'gemini-2.5-flash' }, { stream: true }),
    );
    expect(feed(translator, splitAt(crlf, [cut, cut + 2]))).toEqual(expected.slice(0, 4));
    expect(translator.usage()?.total_tokens).toBe(19);
  });

  it('streams function calls as complete tool_call deltas and finishes with tool_calls', () => {
    const stream = sse([
      [
        undefined,
        {
          candidates: [
            {
              content: {
                role: 'model',
                parts: [
                  { functionCall: { name: 'a', args: { x: 1 } } },
                  { functionCall: { name: 'b', args: {} } },
                ],
              },
              finishReason: 'STOP',
            },
          ],
          responseId: 'r2',
        },
      ],
    ]);
    const translator = googleAdapter.createStreamTranslator(
      ctx({ model: 'gemini-2.5-pro' }, { stream: true }),
    );
    const chunks = feed(translator, chunkBytes(stream, 5));
    expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
      {
        index: 0,
        delta: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              index: 0,
              id: expect.stringMatching(/^call_/),
              type: 'function',
              function: { name: 'a', arguments: '{"x":1}' },
            },
            {
              index: 1,
              id: expect.stringMatching(/^call_/),
              type: 'function',
              function: { name: 'b', arguments: '{}' },
            },
          ],
        },
        logprobs: null,
        finish_reason: null,
      },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' },
    ]);
    expect(chunks[0].model).toBe('gemini-2.5-pro');
  });

  it('streams thoughts as content_blocks only when not strict', () => {
    const stream = sse([
      [
        undefined,
        { candidates: [{ content: { parts: [{ text: 'hmm', thought: true }] } }], responseId: 'r3' },
      ],
      [
        undefined,
        { candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }], responseId: 'r3' },
      ],
    ]);
    const strict = feed(
      googleAdapter.createStreamTranslator(ctx({ model: 'm' }, { stream: true })),
      chunkBytes(stream, 11),
    );
    expect(strict.map((chunk) => chunk.choices[0].delta)).toEqual([{ role: 'assistant', content: 'ok' }, {}]);
    const loose = feed(
      googleAdapter.createStreamTranslator(
        ctx({ model: 'm' }, { stream: true, strictOpenAiCompliance: false }),
      ),
      chunkBytes(stream, 11),
    );
    expect(loose.map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '', content_blocks: [{ index: 0, delta: { thinking: 'hmm' } }] },
      { content: 'ok', content_blocks: [{ index: 1, delta: { text: 'ok' } }] },
      {},
    ]);
  });

  it('passes an in-stream Google error on as an error envelope', () => {
    const stream = sse([
      [undefined, { error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED' } }],
    ]);
    const out = feed(
      googleAdapter.createStreamTranslator(ctx({ model: 'm' }, { stream: true })),
      chunkBytes(stream, 4),
    );
    expect(out).toEqual([
      {
        error: {
          message: 'Resource exhausted',
          type: 'rate_limit_error',
          param: null,
          code: 'RESOURCE_EXHAUSTED',
        },
      },
    ]);
  });
});

describe('googleAdapter embeddings', () => {
  const embedCtx = (body: Record<string, unknown>) => ctx(body, { route: 'embeddings', path: '/embeddings' });

  it('batches inputs through batchEmbedContents', async () => {
    const request = await googleAdapter.buildRequest(
      embedCtx({ model: 'text-embedding-004', input: ['a', 'b'], dimensions: 256 }),
    );
    expect(request.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/text-embedding-004:batchEmbedContents',
    );
    expect(JSON.parse(request.body as string)).toEqual({
      requests: [
        {
          model: 'models/text-embedding-004',
          content: { parts: [{ text: 'a' }] },
          outputDimensionality: 256,
        },
        {
          model: 'models/text-embedding-004',
          content: { parts: [{ text: 'b' }] },
          outputDimensionality: 256,
        },
      ],
    });
  });

  it('answers an OpenAI embedding list, as floats or base64', () => {
    const upstream = { embeddings: [{ values: [0.5, -1] }, { values: [0.25, 2] }] };
    expect(googleAdapter.transformResponse(embedCtx({ model: 'text-embedding-004' }), upstream)).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1] },
        { object: 'embedding', index: 1, embedding: [0.25, 2] },
      ],
      model: 'text-embedding-004',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
    const encoded: any = googleAdapter.transformResponse(
      embedCtx({ model: 'text-embedding-004', encoding_format: 'base64' }),
      upstream,
    );
    const bytes = Buffer.from(encoded.data[0].embedding, 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([0.5, -1]);
  });

  it('rejects token-id inputs Google cannot embed', () => {
    expect(() =>
      googleAdapter.buildRequest(embedCtx({ model: 'text-embedding-004', input: [[1, 2]] })),
    ).toThrow(ProviderRequestError);
  });
});

describe('googleAdapter.transformError', () => {
  it('reads the Google error envelope', () => {
    expect(
      googleAdapter.transformError(400, {
        error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' },
      }),
    ).toEqual({
      message: 'API key not valid.',
      type: 'invalid_request_error',
      param: null,
      code: 'INVALID_ARGUMENT',
    });
    expect(
      googleAdapter.transformError(503, [
        { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } },
      ]),
    ).toEqual({
      message: 'overloaded',
      type: 'api_error',
      param: null,
      code: 'UNAVAILABLE',
    });
  });
});
