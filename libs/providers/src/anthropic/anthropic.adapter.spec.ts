import { chunkBytes, splitAt, sse, utf8 } from '../testing/bytes';
import { jsonBody, makeContext } from '../testing/context';
import { ProviderRequestError } from '../shared/errors';
import { anthropicAdapter } from './anthropic.adapter';
import type { RequestContext } from '../types';

function collect(ctx: RequestContext, chunks: Uint8Array[]) {
  const translator = anthropicAdapter.createStreamTranslator(ctx);
  const out: any[] = [];
  for (const chunk of chunks) out.push(...translator.write(chunk));
  out.push(...translator.end());
  return { out, usage: translator.usage() };
}

describe('anthropic adapter: request', () => {
  it('builds a Messages request from a plain multi-turn chat with system, developer and images', async () => {
    const request = await anthropicAdapter.buildRequest(
      makeContext({
        credentials: { apiKey: 'sk-ant', anthropicBeta: 'prompt-caching-2024-07-31' },
        body: {
          model: 'claude-sonnet-4-5',
          messages: [
            { role: 'system', content: 'You are terse.' },
            { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Bonjour' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in these?' },
                { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
              ],
            },
          ],
          max_completion_tokens: 300,
          temperature: 0.2,
          top_p: 0.9,
          stop: 'END',
          user: 'user-42',
          stream: true,
        },
      }),
    );
    expect(request.method).toBe('POST');
    expect(request.url).toBe('https://api.anthropic.com/v1/messages');
    expect(request.headers).toEqual({
      'content-type': 'application/json',
      'x-api-key': 'sk-ant',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
    });
    expect(jsonBody(request.body)).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'You are terse.\nAnswer in French.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Bonjour' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
      max_tokens: 300,
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      metadata: { user_id: 'user-42' },
    });
  });

  it('defaults max_tokens, keeps cache_control on system parts and passes thinking through', async () => {
    const request = await anthropicAdapter.buildRequest(
      makeContext({
        credentials: { apiKey: 'k', anthropicVersion: '2023-01-01' },
        body: {
          model: 'claude-opus-4-1',
          messages: [
            {
              role: 'system',
              content: [{ type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } }],
            },
            { role: 'user', content: 'Go' },
          ],
          thinking: { type: 'enabled', budget_tokens: 2048 },
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: 'answer',
              schema: { type: 'object', properties: { a: { type: 'string' } } },
            },
          },
        },
      }),
    );
    expect(request.headers['anthropic-version']).toBe('2023-01-01');
    expect(jsonBody(request.body)).toEqual({
      model: 'claude-opus-4-1',
      system: [{ type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Go' }],
      max_tokens: 2048 + 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      output_config: {
        format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string' } } } },
      },
    });
    const plain = await anthropicAdapter.buildRequest(
      makeContext({ body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } }),
    );
    expect((jsonBody(plain.body) as any).max_tokens).toBe(4096);
  });

  it('translates tools, tool choice, assistant tool calls and merges consecutive tool results', async () => {
    const request = await anthropicAdapter.buildRequest(
      makeContext({
        body: {
          model: 'claude-sonnet-4-5',
          messages: [
            { role: 'user', content: 'Weather in Paris and Rome?' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'toolu_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
                {
                  id: 'toolu_2',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
            { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
            { role: 'user', content: 'Thanks' },
          ],
          tools: [
            {
              type: 'function',
              function: {
                name: 'get_weather',
                description: 'Current weather',
                parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
              },
            },
          ],
          tool_choice: 'required',
          parallel_tool_calls: false,
        },
      }),
    );
    expect(jsonBody(request.body)).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ],
      max_tokens: 4096,
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    [
      { type: 'function', function: { name: 'f' } },
      { type: 'tool', name: 'f' },
    ],
  ])('maps tool_choice %j', async (choice, expected) => {
    const request = await anthropicAdapter.buildRequest(
      makeContext({
        body: {
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
          tool_choice: choice,
        },
      }),
    );
    expect((jsonBody(request.body) as any).tool_choice).toEqual(expected);
  });

  it('sends assistant thinking blocks back before the text', async () => {
    const request = await anthropicAdapter.buildRequest(
      makeContext({
        body: {
          model: 'm',
          messages: [
            { role: 'user', content: 'a' },
            {
              role: 'assistant',
              content: 'b',
              content_blocks: [
                { type: 'thinking', thinking: 'hmm', signature: 'sig' },
                { type: 'text', text: 'b' },
              ],
            },
            { role: 'user', content: 'c' },
          ],
        },
      }),
    );
    expect((jsonBody(request.body) as any).messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'b' },
      ],
    });
  });

  it('rejects what Anthropic cannot do', () => {
    expect(() =>
      anthropicAdapter.buildRequest(makeContext({ body: { model: 'm', messages: [], n: 2 } })),
    ).toThrow(ProviderRequestError);
    expect(() =>
      anthropicAdapter.buildRequest(
        makeContext({
          body: {
            model: 'm',
            messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }],
          },
        }),
      ),
    ).toThrow('input_audio');
    expect(() => anthropicAdapter.buildRequest(makeContext({ credentials: {}, body: {} }))).toThrow(
      'API key',
    );
    expect(() => anthropicAdapter.buildRequest(makeContext({ route: 'embeddings' }))).toThrow('embeddings');
  });
});

describe('anthropic adapter: response', () => {
  it('translates a text answer with cache usage', () => {
    const answer = anthropicAdapter.transformResponse(makeContext(), {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 6,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 20,
      },
    });
    expect(answer).toEqual({
      id: 'msg_01',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello!' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 132,
        completion_tokens: 6,
        total_tokens: 138,
        prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 20 },
      },
    });
  });

  it('translates tool use into tool calls with JSON arguments', () => {
    const answer: any = anthropicAdapter.transformResponse(makeContext(), {
      id: 'msg_02',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 50, output_tokens: 20 },
    });
    expect(answer.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'toolu_9',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    expect(answer.usage).toEqual({ prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 });
  });

  it('keeps thinking blocks only when strict compliance is off, and maps max_tokens to length', () => {
    const body = {
      id: 'msg_03',
      model: 'claude-opus-4-1',
      content: [
        { type: 'thinking', thinking: 'Let me think', signature: 'EqQB' },
        { type: 'text', text: '42' },
      ],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 1, output_tokens: 2 },
    };
    const strict: any = anthropicAdapter.transformResponse(makeContext(), body);
    expect(strict.choices[0].message).toEqual({ role: 'assistant', content: '42' });
    expect(strict.choices[0].finish_reason).toBe('length');
    const loose: any = anthropicAdapter.transformResponse(
      makeContext({ strictOpenAiCompliance: false }),
      body,
    );
    expect(loose.choices[0].message).toEqual({
      role: 'assistant',
      content: '42',
      content_blocks: [
        { type: 'thinking', thinking: 'Let me think', signature: 'EqQB' },
        { type: 'text', text: '42' },
      ],
    });
  });

  it('reads the Anthropic error envelope', () => {
    expect(
      anthropicAdapter.transformError(400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
      }),
    ).toEqual({
      message: 'max_tokens: Field required',
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
  });
});

const TEXT_STREAM = sse([
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_s1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        usage: {
          input_tokens: 25,
          output_tokens: 1,
          cache_read_input_tokens: 10,
          cache_creation_input_tokens: 0,
        },
      },
    },
  ],
  [
    'content_block_start',
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  ],
  ['ping', { type: 'ping' }],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Héllo' } },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' wörld 🌍' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 15 },
    },
  ],
  ['message_stop', { type: 'message_stop' }],
]);

describe('anthropic adapter: stream', () => {
  const expectedText = [
    { role: 'assistant', content: '' },
    { content: 'Héllo' },
    { content: ' wörld 🌍' },
    {},
  ];

  it.each([1, 3, 7, 64, 100000])('translates a text stream fed in %i-byte chunks', (size) => {
    const ctx = makeContext({ stream: true, includeUsage: true });
    const { out, usage } = collect(ctx, chunkBytes(TEXT_STREAM, size));
    expect(out.slice(0, 4).map((chunk) => chunk.choices[0].delta)).toEqual(expectedText);
    expect(out[3].choices[0].finish_reason).toBe('stop');
    for (const chunk of out) {
      expect(chunk).toEqual(
        expect.objectContaining({
          id: 'msg_s1',
          object: 'chat.completion.chunk',
          model: 'claude-sonnet-4-5',
        }),
      );
    }
    const expectedUsage = {
      prompt_tokens: 35,
      completion_tokens: 15,
      total_tokens: 50,
      prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 0 },
    };
    expect(out[4]).toEqual(expect.objectContaining({ choices: [], usage: expectedUsage }));
    expect(out).toHaveLength(5);
    expect(usage).toEqual(expectedUsage);
  });

  it('omits the usage chunk when include_usage is off but still reports usage', () => {
    const { out, usage } = collect(makeContext({ stream: true }), [utf8(TEXT_STREAM)]);
    expect(out).toHaveLength(4);
    expect(usage?.completion_tokens).toBe(15);
  });

  const TOOL_STREAM = sse([
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_t',
          model: 'claude-sonnet-4-5',
          content: [],
          usage: { input_tokens: 400, output_tokens: 2 },
        },
      },
    ],
    [
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Need tools.' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'content_block_start',
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking.' } },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 1 }],
    [
      'content_block_start',
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} },
      },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
    ],
    [
      'content_block_delta',
      {
        type: 'content_block_delta',
        index: 2,
        delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' },
      },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'ris"}' } },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 2 }],
    [
      'content_block_start',
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'toolu_b', name: 'get_time', input: {} },
      },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 3 }],
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 90 } },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]);

  it('streams tool calls with consecutive indexes and keeps thinking out in strict mode', () => {
    const bytes = new TextEncoder().encode(TOOL_STREAM).length;
    const offsets = [5, 17, 18, 200, 201, 202, 640, bytes - 3];
    const { out } = collect(makeContext({ stream: true }), splitAt(TOOL_STREAM, offsets));
    expect(out.map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking.' },
      {
        tool_calls: [
          { index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"city": "Pa' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'ris"}' } }] },
      {
        tool_calls: [
          { index: 1, id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ]);
    expect(out[out.length - 1].choices[0].finish_reason).toBe('tool_calls');
  });

  it('streams thinking as content_blocks when strict compliance is off', () => {
    const { out } = collect(
      makeContext({ stream: true, strictOpenAiCompliance: false }),
      chunkBytes(TOOL_STREAM, 11),
    );
    expect(out[1].choices[0].delta).toEqual({
      content_blocks: [{ index: 0, delta: { thinking: 'Need tools.' } }],
    });
    expect(out[2].choices[0].delta).toEqual({ content_blocks: [{ index: 0, delta: { signature: 'EqQB' } }] });
    expect(out[3].choices[0].delta).toEqual({ content: 'Checking.' });
  });

  it('turns an error event into an error chunk the openai client raises', () => {
    const stream = sse([
      [
        'message_start',
        {
          type: 'message_start',
          message: { id: 'm', model: 'c', usage: { input_tokens: 1, output_tokens: 0 } },
        },
      ],
      ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    ]);
    const { out } = collect(makeContext({ stream: true }), [utf8(stream)]);
    expect(out[1]).toEqual({
      error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null },
    });
    expect(out).toHaveLength(2);
  });
});

describe('anthropic adapter: native messages route', () => {
  const body = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

  it('forwards the body as is to /v1/messages with the caller version header', async () => {
    const request = await anthropicAdapter.buildRequest(
      makeContext({
        route: 'messages',
        path: '/messages',
        body,
        forwardHeaders: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024-04-04' },
      }),
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'https://api.anthropic.com/v1/messages',
      headers: {
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'tools-2024-04-04',
        'content-type': 'application/json',
        'x-api-key': 'sk-test',
      },
      body: JSON.stringify(body),
    });
    expect(anthropicAdapter.isOpenAiNative('messages')).toBe(false);
    expect(anthropicAdapter.isNativePassthrough?.('messages')).toBe(true);
    expect(anthropicAdapter.isNativePassthrough?.('chat.completions')).toBe(false);
  });

  it('returns the answer untouched and reads Anthropic usage from it', () => {
    const answer = { id: 'msg', content: [], usage: { input_tokens: 3, output_tokens: 4 } };
    const ctx = makeContext({ route: 'messages' });
    expect(anthropicAdapter.transformResponse(ctx, answer)).toBe(answer);
    expect(anthropicAdapter.extractUsage?.('messages', answer)).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
  });

  it('reads usage from the forwarded stream without emitting chunks', () => {
    const { out, usage } = collect(
      makeContext({ route: 'messages', stream: true }),
      chunkBytes(TEXT_STREAM, 5),
    );
    expect(out).toEqual([]);
    expect(usage).toEqual({
      prompt_tokens: 35,
      completion_tokens: 15,
      total_tokens: 50,
      prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 0 },
    });
  });
});

describe('anthropic adapter: models', () => {
  it('lists models in the OpenAI shape', async () => {
    const ctx = makeContext({ route: 'models.list', method: 'GET', path: '/models' });
    const request = await anthropicAdapter.buildRequest(ctx);
    expect(request.url).toBe('https://api.anthropic.com/v1/models');
    expect(request.method).toBe('GET');
    expect(
      anthropicAdapter.transformResponse(ctx, {
        data: [
          {
            type: 'model',
            id: 'claude-sonnet-4-5',
            display_name: 'Claude Sonnet 4.5',
            created_at: '2025-09-29T00:00:00Z',
          },
        ],
        has_more: false,
      }),
    ).toEqual({
      object: 'list',
      data: [{ id: 'claude-sonnet-4-5', object: 'model', created: 1759104000, owned_by: 'anthropic' }],
    });
  });
});
