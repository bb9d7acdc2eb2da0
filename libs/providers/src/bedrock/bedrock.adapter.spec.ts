import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { ProviderRequestError } from '../shared/errors';
import type { RequestContext } from '../types';
import { bedrockAdapter } from './bedrock.adapter';
import { buildBedrockRequest } from './bedrock.adapter';

const NOW = new Date('2025-03-01T12:00:00Z');
const CREATED = Math.floor(NOW.getTime() / 1000);

beforeEach(() => {
  jest.useFakeTimers({ now: NOW });
});
afterEach(() => {
  jest.useRealTimers();
});

const credentials = {
  awsAccessKeyId: 'AKIDEXAMPLE',
  awsSecretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  awsRegion: 'us-west-2',
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

describe('bedrockAdapter.buildRequest', () => {
  it('posts a signed Converse request with the model id encoded into one path segment', async () => {
    const model =
      'arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0';
    const request = await buildBedrockRequest(
      ctx({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
        ],
        max_tokens: 300,
        temperature: 0.3,
        top_p: 0.8,
        stop: ['\n\n'],
        top_k: 40,
      }),
      new Date('2025-01-02T03:04:05Z'),
    );
    expect(request.method).toBe('POST');
    expect(request.url).toBe(
      'https://bedrock-runtime.us-west-2.amazonaws.com/model/' +
        'arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-5-haiku-20241022-v1%3A0' +
        '/converse',
    );
    expect(request.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      'x-amz-date': '20250102T030405Z',
      authorization: expect.stringMatching(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20250102\/us-west-2\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
      ),
    });
    expect(JSON.parse(request.body as string)).toEqual({
      messages: [
        {
          role: 'user',
          content: [{ text: 'What is this?' }, { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } }],
        },
      ],
      system: [{ text: 'Be brief.' }],
      // top_k has no Converse slot and strict mode keeps provider-only fields out.
      inferenceConfig: { maxTokens: 300, temperature: 0.3, topP: 0.8, stopSequences: ['\n\n'] },
    });
    // Same inputs and date give the same signature.
    const again = await buildBedrockRequest(
      ctx({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
        ],
        max_tokens: 300,
        temperature: 0.3,
        top_p: 0.8,
        stop: ['\n\n'],
        top_k: 40,
      }),
      new Date('2025-01-02T03:04:05Z'),
    );
    expect(again.headers.authorization).toBe(request.headers.authorization);
  });

  it('streams through converse-stream, signs the session token and forwards provider-only fields when not strict', async () => {
    const request = await bedrockAdapter.buildRequest(
      ctx(
        {
          model: 'anthropic.claude-3-7-sonnet-20250219-v1:0',
          messages: [{ role: 'user', content: 'hi' }],
          max_completion_tokens: 2048,
          top_k: 5,
          thinking: { type: 'enabled', budget_tokens: 1024 },
        },
        {
          stream: true,
          strictOpenAiCompliance: false,
          credentials: { ...credentials, awsSessionToken: 'tok', awsRegion: undefined },
        },
      ),
    );
    expect(request.url).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream',
    );
    expect(request.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(request.headers['x-amz-security-token']).toBe('tok');
    expect(request.headers.authorization).toContain(
      'SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token,',
    );
    expect(JSON.parse(request.body as string)).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hi' }] }],
      inferenceConfig: { maxTokens: 2048 },
      additionalModelRequestFields: { top_k: 5, thinking: { type: 'enabled', budget_tokens: 1024 } },
    });
  });

  it('translates tools, tool choice, tool calls and merged tool results', async () => {
    const request = await bedrockAdapter.buildRequest(
      ctx({
        model: 'amazon.nova-pro-v1:0',
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'tooluse_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
              {
                id: 'tooluse_2',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'tooluse_1', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'tooluse_2', content: 'sunny' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
        tool_choice: 'required',
      }),
    );
    expect(JSON.parse(request.body as string)).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Weather in Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
            { toolUse: { toolUseId: 'tooluse_2', name: 'get_weather', input: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'tooluse_1', content: [{ json: { temp: 21 } }] } },
            { toolResult: { toolUseId: 'tooluse_2', content: [{ text: 'sunny' }] } },
          ],
        },
      ],
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Weather for a city',
              inputSchema: {
                json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
              },
            },
          },
        ],
        toolChoice: { any: {} },
      },
    });
  });

  it.each([
    ['auto', { auto: {} }],
    [{ type: 'function', function: { name: 'f' } }, { tool: { name: 'f' } }],
  ])('maps tool_choice %j', async (choice, expected) => {
    const request = await bedrockAdapter.buildRequest(
      ctx({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: choice,
      }),
    );
    expect(JSON.parse(request.body as string).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }],
      toolChoice: expected,
    });
  });

  it('omits tools for tool_choice none', async () => {
    const request = await bedrockAdapter.buildRequest(
      ctx({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: 'none',
      }),
    );
    expect(JSON.parse(request.body as string).toolConfig).toBeUndefined();
  });

  it('keeps tools declared for tool_choice none when the conversation already holds tool calls', async () => {
    const request = await bedrockAdapter.buildRequest(
      ctx({
        model: 'm',
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 't1', content: 'done' },
        ],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: 'none',
      }),
    );
    expect(JSON.parse(request.body as string).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }],
    });
  });

  it('rejects remote image URLs and missing credentials before calling upstream', async () => {
    await expect(
      bedrockAdapter.buildRequest(
        ctx({
          model: 'm',
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/cat.png' } }] },
          ],
        }),
      ),
    ).rejects.toBeInstanceOf(ProviderRequestError);
    await expect(
      bedrockAdapter.buildRequest(
        ctx({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { credentials: {} }),
      ),
    ).rejects.toMatchObject({ status: 401 });
  });
});

describe('bedrockAdapter.transformResponse', () => {
  it('translates a text answer with cache usage', () => {
    const answer: any = bedrockAdapter.transformResponse(ctx({ model: 'anthropic.claude-3-5-sonnet' }), {
      output: { message: { role: 'assistant', content: [{ text: 'Hello ' }, { text: 'there.' }] } },
      stopReason: 'end_turn',
      usage: {
        inputTokens: 10,
        outputTokens: 4,
        totalTokens: 44,
        cacheReadInputTokens: 25,
        cacheWriteInputTokens: 5,
      },
      metrics: { latencyMs: 300 },
    });
    expect(answer).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: CREATED,
      model: 'anthropic.claude-3-5-sonnet',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there.' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 40,
        completion_tokens: 4,
        total_tokens: 44,
        prompt_tokens_details: { cached_tokens: 25, cache_creation_tokens: 5 },
      },
    });
    expect(bedrockAdapter.extractUsage?.('chat.completions', answer)?.total_tokens).toBe(44);
  });

  it('translates tool use, and shows reasoning only when not strict', () => {
    const upstream = {
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Need weather.', signature: 'sig' } } },
            { toolUse: { toolUseId: 'tooluse_abc', name: 'get_weather', input: { city: 'Paris' } } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 50, outputTokens: 20, totalTokens: 70 },
    };
    const strict: any = bedrockAdapter.transformResponse(ctx({ model: 'm' }), upstream);
    expect(strict.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'tooluse_abc',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(strict.usage).toEqual({ prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 });
    const loose: any = bedrockAdapter.transformResponse(
      ctx({ model: 'm' }, { strictOpenAiCompliance: false }),
      upstream,
    );
    expect(loose.choices[0].message.content_blocks).toEqual([
      { type: 'thinking', thinking: 'Need weather.', signature: 'sig' },
    ]);
  });

  it.each([
    ['max_tokens', 'length'],
    ['stop_sequence', 'stop'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('maps stopReason %s to %s', (stopReason, finish) => {
    const answer: any = bedrockAdapter.transformResponse(ctx({ model: 'm' }), {
      output: { message: { role: 'assistant', content: [{ text: 'x' }] } },
      stopReason,
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    });
    expect(answer.choices[0].finish_reason).toBe(finish);
  });
});

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function eventFrame(type: string, payload: object): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    // Bedrock pads payloads with a `p` field to hide their length.
    body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefgh' })),
  });
}

function concat(frames: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(frames.reduce((sum, frame) => sum + frame.byteLength, 0));
  let offset = 0;
  for (const frame of frames) {
    out.set(frame, offset);
    offset += frame.byteLength;
  }
  return out;
}

function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.byteLength; i += size) chunks.push(bytes.slice(i, i + size));
  return chunks;
}

function run(context: RequestContext, chunks: Uint8Array[]): { out: any[]; translator: any } {
  const translator = bedrockAdapter.createStreamTranslator(context);
  const out: any[] = [];
  for (const chunk of chunks) out.push(...translator.write(chunk));
  out.push(...translator.end());
  return { out, translator };
}

describe('bedrockAdapter stream translator', () => {
  const stream = concat([
    eventFrame('messageStart', { role: 'assistant' }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me ' } }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'check — ünïcode.' } }),
    eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
    eventFrame('contentBlockStart', {
      contentBlockIndex: 1,
      start: { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather' } },
    }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } }),
    eventFrame('contentBlockStop', { contentBlockIndex: 1 }),
    eventFrame('messageStop', { stopReason: 'tool_use' }),
    eventFrame('metadata', {
      usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
      metrics: { latencyMs: 812 },
    }),
  ]);

  const expectedChoices = [
    { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
    { index: 0, delta: { content: 'Let me ' }, logprobs: null, finish_reason: null },
    { index: 0, delta: { content: 'check — ünïcode.' }, logprobs: null, finish_reason: null },
    {
      index: 0,
      delta: {
        tool_calls: [
          { index: 0, id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      },
      logprobs: null,
      finish_reason: null,
    },
    {
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      logprobs: null,
      finish_reason: null,
    },
    {
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      logprobs: null,
      finish_reason: null,
    },
    { index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' },
  ];

  it.each([1, 5, 13, 100, 100000])('decodes frames split every %i bytes into the same chunks', (size) => {
    const { out, translator } = run(
      ctx({ model: 'anthropic.claude-3-5-sonnet' }, { stream: true, includeUsage: true }),
      split(stream, size),
    );
    expect(out.slice(0, -1).map((chunk) => chunk.choices[0])).toEqual(expectedChoices);
    const ids = new Set(out.map((chunk) => chunk.id));
    expect(ids.size).toBe(1);
    expect(out[0]).toMatchObject({
      object: 'chat.completion.chunk',
      created: CREATED,
      model: 'anthropic.claude-3-5-sonnet',
    });
    expect(out[out.length - 1]).toEqual({
      id: out[0].id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model: 'anthropic.claude-3-5-sonnet',
      choices: [],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
    });
    expect(translator.usage()).toEqual({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 });
  });

  it('decodes a chunk that ends inside the prelude of the next frame', () => {
    const first = eventFrame('messageStart', { role: 'assistant' });
    const second = eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } });
    const bytes = concat([first, second]);
    const { out } = run(ctx({ model: 'm' }, { stream: true }), [
      bytes.slice(0, first.byteLength + 6),
      bytes.slice(first.byteLength + 6),
    ]);
    expect(out.map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'x' },
    ]);
  });

  it('shows reasoning deltas as content_blocks only when not strict', () => {
    const bytes = concat([
      eventFrame('messageStart', { role: 'assistant' }),
      eventFrame('contentBlockDelta', {
        contentBlockIndex: 0,
        delta: { reasoningContent: { text: 'Hmm.' } },
      }),
      eventFrame('contentBlockDelta', {
        contentBlockIndex: 0,
        delta: { reasoningContent: { signature: 'sig' } },
      }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Yes.' } }),
      eventFrame('messageStop', { stopReason: 'end_turn' }),
    ]);
    const strict = run(ctx({ model: 'm' }, { stream: true }), split(bytes, 9)).out;
    expect(strict.map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Yes.' },
      {},
    ]);
    const loose = run(
      ctx({ model: 'm' }, { stream: true, strictOpenAiCompliance: false }),
      split(bytes, 9),
    ).out;
    expect(loose.map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content_blocks: [{ index: 0, delta: { thinking: 'Hmm.' } }] },
      { content_blocks: [{ index: 0, delta: { signature: 'sig' } }] },
      { content: 'Yes.', content_blocks: [{ index: 1, delta: { text: 'Yes.' } }] },
      {},
    ]);
  });

  it('turns an exception frame into an error envelope', () => {
    const exception = codec.encode({
      headers: {
        ':exception-type': { type: 'string', value: 'throttlingException' },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'exception' },
      },
      body: fromUtf8(JSON.stringify({ message: 'Too many requests, please wait before trying again.' })),
    });
    const { out } = run(
      ctx({ model: 'm' }, { stream: true }),
      split(concat([eventFrame('messageStart', { role: 'assistant' }), exception]), 7),
    );
    expect(out[1]).toEqual({
      error: {
        message: 'Too many requests, please wait before trying again.',
        type: 'rate_limit_error',
        param: null,
        code: 'throttlingException',
      },
    });
  });

  it('rejects a corrupted frame instead of emitting garbage', () => {
    const frame = eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } });
    frame[frame.byteLength - 6] ^= 0xff;
    const translator = bedrockAdapter.createStreamTranslator(ctx({ model: 'm' }, { stream: true }));
    expect(() => translator.write(frame)).toThrow();
  });
});

describe('bedrockAdapter embeddings', () => {
  const embedCtx = (body: Record<string, unknown>) => ctx(body, { route: 'embeddings', path: '/embeddings' });

  it('calls InvokeModel with the Titan body and translates its answer', async () => {
    const request = await bedrockAdapter.buildRequest(
      embedCtx({ model: 'amazon.titan-embed-text-v2:0', input: 'hello', dimensions: 256 }),
    );
    expect(request.url).toBe(
      'https://bedrock-runtime.us-west-2.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke',
    );
    expect(JSON.parse(request.body as string)).toEqual({ inputText: 'hello', dimensions: 256 });
    expect(
      bedrockAdapter.transformResponse(embedCtx({ model: 'amazon.titan-embed-text-v2:0' }), {
        embedding: [0.1, 0.2],
        inputTextTokenCount: 3,
      }),
    ).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
      model: 'amazon.titan-embed-text-v2:0',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
  });

  it('batches Cohere inputs and reads both answer shapes', async () => {
    const request = await bedrockAdapter.buildRequest(
      embedCtx({ model: 'cohere.embed-english-v3', input: ['a', 'b'] }),
    );
    expect(JSON.parse(request.body as string)).toEqual({
      texts: ['a', 'b'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
    const expected = [
      { object: 'embedding', index: 0, embedding: [1, 2] },
      { object: 'embedding', index: 1, embedding: [3, 4] },
    ];
    const model = { model: 'cohere.embed-english-v3' };
    expect(
      (
        bedrockAdapter.transformResponse(embedCtx(model), {
          embeddings: {
            float: [
              [1, 2],
              [3, 4],
            ],
          },
        }) as any
      ).data,
    ).toEqual(expected);
    expect(
      (
        bedrockAdapter.transformResponse(embedCtx(model), {
          embeddings: [
            [1, 2],
            [3, 4],
          ],
        }) as any
      ).data,
    ).toEqual(expected);
  });

  it('refuses several inputs for Titan and unknown embedding models', async () => {
    await expect(
      bedrockAdapter.buildRequest(embedCtx({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] })),
    ).rejects.toBeInstanceOf(ProviderRequestError);
    await expect(
      bedrockAdapter.buildRequest(embedCtx({ model: 'meta.llama3', input: 'a' })),
    ).rejects.toBeInstanceOf(ProviderRequestError);
  });
});

describe('bedrockAdapter.transformError', () => {
  it('reads the Bedrock error body', () => {
    expect(bedrockAdapter.transformError(400, { message: 'Malformed input request' })).toEqual({
      message: 'Malformed input request',
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
    expect(
      bedrockAdapter.transformError(429, {
        __type: 'com.amazon.coral.availability#ThrottlingException',
        message: 'Too many requests',
      }),
    ).toEqual({
      message: 'Too many requests',
      type: 'rate_limit_error',
      param: null,
      code: 'ThrottlingException',
    });
    expect(bedrockAdapter.transformError(403, { Message: 'not authorized' })).toEqual({
      message: 'not authorized',
      type: 'permission_error',
      param: null,
      code: null,
    });
  });
});
