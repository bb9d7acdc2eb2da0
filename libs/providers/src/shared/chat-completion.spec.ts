import { buildChatCompletion, ChatChunkFactory } from './chat-completion';
import { mapFinishReason, ANTHROPIC_FINISH_REASONS } from './finish-reason';
import { generateChatCompletionId } from './ids';

describe('chat completion builders', () => {
  it('builds a single-choice completion and drops empty tool calls and blocks', () => {
    expect(
      buildChatCompletion({
        id: 'x',
        created: 1,
        model: 'm',
        content: 'hi',
        toolCalls: [],
        finishReason: 'stop',
      }),
    ).toEqual({
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'hi' }, logprobs: null, finish_reason: 'stop' },
      ],
    });
  });

  it('repeats id, model and creation time on every chunk and ends with a usage chunk', () => {
    const factory = new ChatChunkFactory({ id: 'c', model: 'm', created: 5 });
    expect(factory.chunk({ content: 'a' })).toEqual({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 5,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'a' }, logprobs: null, finish_reason: null }],
    });
    expect(factory.usageChunk({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 5,
      model: 'm',
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
  });

  it('generates OpenAI-style ids', () => {
    const id = generateChatCompletionId();
    expect(id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(generateChatCompletionId()).not.toBe(id);
  });

  it('maps finish reasons, unknown ones to the fallback and a missing one to null', () => {
    expect(mapFinishReason(ANTHROPIC_FINISH_REASONS, 'tool_use')).toBe('tool_calls');
    expect(mapFinishReason(ANTHROPIC_FINISH_REASONS, 'something_new')).toBe('stop');
    expect(mapFinishReason(ANTHROPIC_FINISH_REASONS, null)).toBeNull();
    expect(mapFinishReason(ANTHROPIC_FINISH_REASONS, 'toString')).toBe('stop');
  });
});
