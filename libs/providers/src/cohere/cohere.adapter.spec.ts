import { chunkBytes, sse } from '../testing/bytes';
import { jsonBody, makeContext } from '../testing/context';
import { cohereAdapter } from './cohere.adapter';

describe('cohere adapter', () => {
  it('builds a /v2/chat request with tools, tool results and renamed parameters', async () => {
    const request = await cohereAdapter.buildRequest(
      makeContext({
        body: {
          model: 'command-a-03-2025',
          messages: [
            { role: 'developer', content: 'Be brief.' },
            { role: 'user', content: 'Weather in Paris?' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'c1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: 'c1', content: '18C' },
          ],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
          tool_choice: 'required',
          top_p: 0.8,
          max_tokens: 100,
          stop: ['\n\n'],
          stream: true,
        },
      }),
    );
    expect(request.url).toBe('https://api.cohere.com/v2/chat');
    expect(request.headers).toEqual({ authorization: 'Bearer sk-test', 'content-type': 'application/json' });
    expect(jsonBody(request.body)).toEqual({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '18C' },
      ],
      stream: true,
      max_tokens: 100,
      stop_sequences: ['\n\n'],
      p: 0.8,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      tool_choice: 'REQUIRED',
    });
  });

  it('translates plain and tool-calling answers', () => {
    const ctx = makeContext({ body: { model: 'command-a-03-2025' } });
    expect(
      cohereAdapter.transformResponse(ctx, {
        id: 'c-1',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] },
        usage: {
          billed_units: { input_tokens: 5, output_tokens: 2 },
          tokens: { input_tokens: 70, output_tokens: 2 },
        },
      }),
    ).toEqual({
      id: 'c-1',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'command-a-03-2025',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello' }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 70, completion_tokens: 2, total_tokens: 72 },
    });
    const tool: any = cohereAdapter.transformResponse(ctx, {
      id: 'c-2',
      finish_reason: 'TOOL_CALL',
      message: {
        role: 'assistant',
        tool_plan: 'I will look it up',
        tool_calls: [
          {
            id: 'get_weather_x',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      usage: { billed_units: { input_tokens: 30, output_tokens: 12 } },
    });
    expect(tool.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'get_weather_x',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
      ],
    });
    expect(tool.choices[0].finish_reason).toBe('tool_calls');
  });

  it.each([2, 13, 4096])('translates a streamed answer with a tool call fed in %i-byte chunks', (size) => {
    const stream = sse([
      [
        'message-start',
        {
          type: 'message-start',
          id: 'c-s',
          delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [] } },
        },
      ],
      ['tool-plan-delta', { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will call' } } }],
      [
        'tool-call-start',
        {
          type: 'tool-call-start',
          index: 0,
          delta: {
            message: {
              tool_calls: { id: 'tc_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
            },
          },
        },
      ],
      [
        'tool-call-delta',
        {
          type: 'tool-call-delta',
          index: 0,
          delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } },
        },
      ],
      [
        'tool-call-delta',
        {
          type: 'tool-call-delta',
          index: 0,
          delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } },
        },
      ],
      ['tool-call-end', { type: 'tool-call-end', index: 0 }],
      [
        'content-start',
        { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      ],
      [
        'content-delta',
        { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Ok ✓' } } } },
      ],
      [
        'message-end',
        {
          type: 'message-end',
          delta: {
            finish_reason: 'TOOL_CALL',
            usage: {
              billed_units: { input_tokens: 9, output_tokens: 4 },
              tokens: { input_tokens: 40, output_tokens: 4 },
            },
          },
        },
      ],
    ]);
    const ctx = makeContext({ stream: true, includeUsage: true, body: { model: 'command-a-03-2025' } });
    const translator = cohereAdapter.createStreamTranslator(ctx);
    const out: any[] = [];
    for (const chunk of chunkBytes(stream, size)) out.push(...translator.write(chunk));
    out.push(...translator.end());
    expect(out.slice(0, 6).map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      {
        tool_calls: [
          { index: 0, id: 'tc_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { content: 'Ok ✓' },
      {},
    ]);
    expect(out[5].choices[0].finish_reason).toBe('tool_calls');
    expect(out[6]).toEqual(
      expect.objectContaining({
        id: 'c-s',
        model: 'command-a-03-2025',
        choices: [],
        usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 },
      }),
    );
    expect(out).toHaveLength(7);
  });

  it('translates embeddings both ways', async () => {
    const ctx = makeContext({
      route: 'embeddings',
      path: '/embeddings',
      body: { model: 'embed-v4.0', input: ['a', 'b'], dimensions: 256 },
    });
    const request = await cohereAdapter.buildRequest(ctx);
    expect(request.url).toBe('https://api.cohere.com/v2/embed');
    expect(jsonBody(request.body)).toEqual({
      model: 'embed-v4.0',
      texts: ['a', 'b'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    expect(
      cohereAdapter.transformResponse(ctx, {
        id: 'e1',
        embeddings: { float: [[0.1], [0.2]] },
        texts: ['a', 'b'],
        meta: { billed_units: { input_tokens: 2 } },
      }),
    ).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.1] },
        { object: 'embedding', index: 1, embedding: [0.2] },
      ],
      model: 'embed-v4.0',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
  });

  it('translates rerank, returning documents from the request when asked', async () => {
    const ctx = makeContext({
      route: 'rerank',
      path: '/rerank',
      body: {
        model: 'rerank-v3.5',
        query: 'capital',
        documents: ['Paris', { text: 'Berlin' }],
        top_n: 2,
        return_documents: true,
      },
    });
    const request = await cohereAdapter.buildRequest(ctx);
    expect(request.url).toBe('https://api.cohere.com/v2/rerank');
    expect(jsonBody(request.body)).toEqual({
      model: 'rerank-v3.5',
      query: 'capital',
      documents: ['Paris', 'Berlin'],
      top_n: 2,
    });
    expect(
      cohereAdapter.transformResponse(ctx, {
        id: 'r1',
        results: [
          { index: 1, relevance_score: 0.9 },
          { index: 0, relevance_score: 0.2 },
        ],
        meta: { billed_units: { search_units: 1 } },
      }),
    ).toEqual({
      object: 'list',
      id: 'r1',
      model: 'rerank-v3.5',
      results: [
        { index: 1, relevance_score: 0.9, document: { text: 'Berlin' } },
        { index: 0, relevance_score: 0.2, document: { text: 'Paris' } },
      ],
      provider: 'cohere',
      usage: { search_units: 1 },
    });
  });

  it('reads Cohere errors and refuses other routes', () => {
    expect(
      cohereAdapter.transformError(400, { id: 'x', message: 'invalid request: model not found' }),
    ).toEqual({
      message: 'invalid request: model not found',
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
    expect(() => cohereAdapter.buildRequest(makeContext({ route: 'images.generations' }))).toThrow(
      'images.generations',
    );
  });
});
