/**
 * Mock of the Cohere v2 API: POST /v2/chat (JSON, or SSE with message-start, content-start/delta/end,
 * tool-plan-delta, tool-call-start/delta/end, message-end), /v2/embed and /v2/rerank.
 */
import {
  ErrorShape,
  MockContext,
  MockServer,
  fakeEmbedding,
  headerValue,
  mockId,
  splitJson,
  splitText,
  sseEvent,
} from './mock-server';

export interface CohereMockOptions {
  /** When set, only `Authorization: Bearer <apiKey>` is accepted; otherwise any Bearer token is. */
  apiKey?: string;
  requireAuth?: boolean;
}

/** Cohere's errors are a bare `{ message }` (with an id on newer API versions). */
export const cohereErrorShape: ErrorShape = (status, message) => ({
  body: { id: `mock-error-${Date.now().toString(36)}`, message },
});

export async function startCohereMock(options: CohereMockOptions = {}): Promise<MockServer> {
  const requireAuth = options.requireAuth ?? true;
  const guarded =
    (handler: (context: MockContext) => void | Promise<void>) =>
    (context: MockContext): void | Promise<void> => {
      if (requireAuth) {
        const authorization = headerValue(context.request.headers, 'authorization') ?? '';
        const token = authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
        if (!token || (options.apiKey !== undefined && token !== options.apiKey)) {
          return context.error(401, 'invalid api token');
        }
      }
      if (context.request.bodyError)
        return context.error(400, `invalid request: ${context.request.bodyError}`);
      if (typeof context.body.model !== 'string')
        return context.error(400, 'invalid request: model must be specified');
      return handler(context);
    };
  const server = new MockServer({
    name: 'cohere',
    errorShape: cohereErrorShape,
    routes: [
      { method: 'POST', path: '/v2/chat', handler: guarded(chat) },
      { method: 'POST', path: '/v2/embed', handler: guarded(embed) },
      { method: 'POST', path: '/v2/rerank', handler: guarded(rerank) },
    ],
  });
  return server.listen();
}

function usage(context: MockContext) {
  const { inputTokens, outputTokens } = context.reply;
  return {
    billed_units: { input_tokens: inputTokens, output_tokens: outputTokens },
    tokens: { input_tokens: inputTokens, output_tokens: outputTokens },
  };
}

async function chat(context: MockContext): Promise<void> {
  const { body, reply, request } = context;
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return context.error(400, 'invalid request: messages cannot be empty');
  }
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const toolName: string | undefined = body.tool_choice === 'NONE' ? undefined : tools[0]?.function?.name;
  // Cohere ids are UUIDs; this one encodes the arrival order so it is stable within a run.
  const id = `00000000-0000-4000-8000-${String(request.seq).padStart(12, '0')}`;
  const toolCallId = `${toolName ?? 'tool'}_${request.seq}mock`;
  const args = JSON.stringify(reply.toolArguments);
  const toolPlan = 'I will call the tool to answer.';
  const finishReason = toolName ? 'TOOL_CALL' : 'COMPLETE';

  if (body.stream !== true) {
    const message = toolName
      ? {
          role: 'assistant',
          tool_plan: toolPlan,
          tool_calls: [{ id: toolCallId, type: 'function', function: { name: toolName, arguments: args } }],
        }
      : { role: 'assistant', content: [{ type: 'text', text: reply.text }] };
    return context.json(200, { id, finish_reason: finishReason, message, usage: usage(context) });
  }

  // Each event is named twice, in the SSE `event:` line and in the payload's `type`.
  const events: string[] = [];
  const emit = (type: string, data: Record<string, unknown>) =>
    events.push(sseEvent({ type, ...data }, type));
  emit('message-start', {
    id,
    delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
  });
  if (toolName) {
    for (const piece of splitText(toolPlan))
      emit('tool-plan-delta', { delta: { message: { tool_plan: piece } } });
    emit('tool-call-start', {
      index: 0,
      delta: {
        message: {
          tool_calls: { id: toolCallId, type: 'function', function: { name: toolName, arguments: '' } },
        },
      },
    });
    for (const fragment of splitJson(args)) {
      emit('tool-call-delta', {
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: fragment } } } },
      });
    }
    emit('tool-call-end', { index: 0 });
  } else {
    emit('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const piece of splitText(reply.text)) {
      emit('content-delta', { index: 0, delta: { message: { content: { text: piece } } } });
    }
    emit('content-end', { index: 0 });
  }
  emit('message-end', { id, delta: { finish_reason: finishReason, usage: usage(context) } });
  await context.stream(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, events);
}

function embed(context: MockContext): void {
  const { body, reply, request } = context;
  const texts: string[] = Array.isArray(body.texts)
    ? body.texts
    : Array.isArray(body.inputs)
      ? body.inputs.map((i: any) =>
          Array.isArray(i?.content) ? i.content.map((c: any) => c?.text ?? '').join('') : '',
        )
      : [];
  if (texts.length === 0) return context.error(400, 'invalid request: texts or inputs must be provided');
  if (!body.input_type) return context.error(400, 'invalid request: input_type is required');
  const dimensions = Number.isInteger(body.output_dimension)
    ? body.output_dimension
    : reply.embeddingDimensions;
  const types: string[] =
    Array.isArray(body.embedding_types) && body.embedding_types.length > 0 ? body.embedding_types : ['float'];
  const embeddings: Record<string, number[][]> = {};
  for (const type of types) {
    const vectors = texts.map((t) => fakeEmbedding(t, dimensions));
    // int8 keeps the same direction scaled to bytes; enough for shape tests.
    embeddings[type] = type === 'float' ? vectors : vectors.map((v) => v.map((x) => Math.round(x * 127)));
  }
  context.json(200, {
    id: mockId('embed-', request),
    embeddings,
    texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: reply.inputTokens } },
    response_type: 'embeddings_by_type',
  });
}

function rerank(context: MockContext): void {
  const { body, request } = context;
  const documents: unknown[] = Array.isArray(body.documents) ? body.documents : [];
  if (typeof body.query !== 'string' || documents.length === 0) {
    return context.error(400, 'invalid request: query and documents are required');
  }
  // Score = share of query words found in the document: deterministic and easy to reason about.
  const words = body.query.toLowerCase().split(/\W+/).filter(Boolean);
  const scored = documents.map((doc, index) => {
    const text = (typeof doc === 'string' ? doc : JSON.stringify(doc)).toLowerCase();
    const hits = words.filter((w: string) => text.includes(w)).length;
    return { index, relevance_score: words.length ? Math.round((hits / words.length) * 1e4) / 1e4 : 0 };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const topN = Number.isInteger(body.top_n) && body.top_n > 0 ? body.top_n : scored.length;
  context.json(200, {
    id: mockId('rerank-', request),
    results: scored.slice(0, topN),
    meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
  });
}
