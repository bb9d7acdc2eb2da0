import { chunkBytes, utf8 } from '../testing/bytes';
import { buildUsage, extractOpenAiUsage, OpenAiSseUsageScanner, readOpenAiUsage } from './usage';

describe('buildUsage', () => {
  it('counts cache reads and writes in prompt_tokens and reports them in the details', () => {
    expect(
      buildUsage({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 100, cacheCreationTokens: 20 }),
    ).toEqual({
      prompt_tokens: 130,
      completion_tokens: 5,
      total_tokens: 135,
      prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 20 },
    });
  });

  it('omits details that were not reported', () => {
    expect(buildUsage({ inputTokens: 3, outputTokens: 4 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
  });
});

describe('readOpenAiUsage / extractOpenAiUsage', () => {
  it('reads chat usage with details', () => {
    expect(
      extractOpenAiUsage({
        id: 'x',
        usage: {
          prompt_tokens: 9,
          completion_tokens: 12,
          total_tokens: 21,
          prompt_tokens_details: { cached_tokens: 2, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 4 },
        },
      }),
    ).toEqual({
      prompt_tokens: 9,
      completion_tokens: 12,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 2, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 4 },
    });
  });

  it('reads embeddings usage (no completion tokens) and Responses API naming', () => {
    expect(readOpenAiUsage({ prompt_tokens: 8, total_tokens: 8 })).toEqual({
      prompt_tokens: 8,
      completion_tokens: 0,
      total_tokens: 8,
    });
    expect(
      extractOpenAiUsage({
        usage: {
          input_tokens: 5,
          output_tokens: 6,
          total_tokens: 11,
          input_tokens_details: { cached_tokens: 1 },
        },
      }),
    ).toEqual({
      prompt_tokens: 5,
      completion_tokens: 6,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 1 },
    });
  });

  it('returns undefined when there is no usage', () => {
    expect(extractOpenAiUsage({ data: [] })).toBeUndefined();
    expect(extractOpenAiUsage('text')).toBeUndefined();
    expect(readOpenAiUsage(null)).toBeUndefined();
  });
});

describe('OpenAiSseUsageScanner', () => {
  const stream =
    'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"usage"}}],"usage":null}\n\n' +
    'data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n' +
    'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}\n\n' +
    'data: [DONE]\n\n';

  it.each([1, 4, 1000])('finds the usage chunk when fed %i-byte chunks', (size) => {
    const scanner = new OpenAiSseUsageScanner();
    for (const chunk of chunkBytes(stream, size)) scanner.write(chunk);
    scanner.end();
    expect(scanner.usage()).toEqual({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  });

  it('reads the Responses API completed event', () => {
    const scanner = new OpenAiSseUsageScanner();
    scanner.write(
      utf8(
        'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r","usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}}\n\n',
      ),
    );
    expect(scanner.usage()).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('reports nothing for a stream without usage', () => {
    const scanner = new OpenAiSseUsageScanner();
    scanner.write(utf8('data: {"choices":[{"delta":{"content":"\\"usage\\": {"}}],"usage":null}\n\n'));
    scanner.end();
    expect(scanner.usage()).toBeUndefined();
  });
});
