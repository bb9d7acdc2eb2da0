/**
 * Mock of the Anthropic Messages API: POST /v1/messages as JSON or as named SSE events
 * (message_start, content_block_start/delta/stop, ping, message_delta, message_stop), with
 * thinking blocks when the request enables thinking and tool_use blocks when it offers tools.
 */
import {
  ErrorShape,
  MockContext,
  MockServer,
  headerValue,
  mockId,
  splitJson,
  splitText,
  sseEvent,
} from './mock-server';

export interface AnthropicMockOptions {
  /** When set, only this `x-api-key` is accepted; otherwise any non-empty key is. */
  apiKey?: string;
  requireAuth?: boolean;
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export const anthropicErrorShape: ErrorShape = (status, message, errorType) => ({
  body: {
    type: 'error',
    error: {
      type:
        errorType ?? ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
      message,
    },
  },
  headers: { 'request-id': `req_mock_${Date.now().toString(36)}` },
});

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export async function startAnthropicMock(options: AnthropicMockOptions = {}): Promise<MockServer> {
  const requireAuth = options.requireAuth ?? true;
  const server = new MockServer({
    name: 'anthropic',
    errorShape: anthropicErrorShape,
    routes: [
      {
        method: 'POST',
        path: '/v1/messages',
        handler: (context) => {
          if (requireAuth) {
            const key = headerValue(context.request.headers, 'x-api-key');
            if (!key || (options.apiKey !== undefined && key !== options.apiKey)) {
              return context.error(401, 'invalid x-api-key');
            }
          }
          // The real API refuses requests without a version header.
          if (!headerValue(context.request.headers, 'anthropic-version')) {
            return context.error(400, 'anthropic-version: header is required');
          }
          return messages(context);
        },
      },
    ],
  });
  return server.listen();
}

function validate(context: MockContext): boolean {
  const { request, body } = context;
  if (request.bodyError) {
    context.error(400, `invalid JSON body: ${request.bodyError}`);
  } else if (typeof body.model !== 'string') {
    context.error(400, 'model: Field required');
  } else if (typeof body.max_tokens !== 'number') {
    context.error(400, 'max_tokens: Field required');
  } else if (!Array.isArray(body.messages) || body.messages.length === 0) {
    context.error(400, 'messages: at least one message is required');
  } else if (body.messages.some((m: any) => m?.role === 'system')) {
    // System prompts go in the top-level `system` field; adapters must move them there.
    context.error(400, 'messages: Unexpected role "system". Use the top-level `system` parameter.');
  } else {
    return true;
  }
  return false;
}

function blocksFor(context: MockContext): Block[] {
  const { body, reply } = context;
  const blocks: Block[] = [];
  if (body.thinking?.type === 'enabled') {
    blocks.push({ type: 'thinking', thinking: reply.reasoning, signature: 'EqQBCkYIARgCIkDmocksignature' });
  }
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const choice = body.tool_choice;
  const toolName =
    tools.length > 0 && choice?.type !== 'none'
      ? choice?.type === 'tool'
        ? choice.name
        : tools[0]?.name
      : undefined;
  if (toolName) {
    blocks.push({ type: 'text', text: 'I will call the tool.' });
    blocks.push({
      type: 'tool_use',
      id: mockId('toolu_', context.request),
      name: toolName,
      input: reply.toolArguments,
    });
  } else {
    blocks.push({ type: 'text', text: reply.text });
  }
  return blocks;
}

async function messages(context: MockContext): Promise<void> {
  if (!validate(context)) return;
  const { body, reply, request } = context;
  const blocks = blocksFor(context);
  const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const id = mockId('msg_', request);
  const usage = {
    input_tokens: reply.inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: reply.cachedTokens,
    output_tokens: reply.outputTokens,
    service_tier: 'standard',
  };
  const headers = { 'request-id': `req_${id}` };

  if (body.stream !== true) {
    context.json(
      200,
      {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      },
      headers,
    );
    return;
  }

  const events: string[] = [];
  const emit = (type: string, data: Record<string, unknown>) =>
    events.push(sseEvent({ type, ...data }, type));
  emit('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Output tokens start at 1 and the final count comes in message_delta, as upstream does.
      usage: { ...usage, output_tokens: 1 },
    },
  });
  blocks.forEach((block, index) => {
    const start =
      block.type === 'thinking'
        ? { type: 'thinking', thinking: '', signature: '' }
        : block.type === 'text'
          ? { type: 'text', text: '' }
          : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    emit('content_block_start', { index, content_block: start });
    // Upstream sends a ping right after the first block starts; adapters must skip it.
    if (index === 0) emit('ping', {});
    if (block.type === 'thinking') {
      for (const piece of splitText(block.thinking)) {
        emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      }
      emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'text') {
      for (const piece of splitText(block.text)) {
        emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      }
    } else {
      for (const fragment of splitJson(JSON.stringify(block.input))) {
        emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: fragment } });
      }
    }
    emit('content_block_stop', { index });
  });
  emit('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: reply.outputTokens },
  });
  emit('message_stop', {});
  await context.stream(
    200,
    { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers },
    events,
  );
}
