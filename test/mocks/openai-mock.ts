/**
 * Mock of the OpenAI REST API (the shapes of `reference/openai-openapi/openapi.yaml`): chat and
 * text completions (JSON and data-only SSE), embeddings (float and base64), moderations, models,
 * audio transcriptions (multipart, echoed back) and an echo for every other path (passthrough).
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

export interface OpenAIMockOptions {
  /** When set, only `Authorization: Bearer <apiKey>` is accepted; otherwise any Bearer token is. */
  apiKey?: string;
  /** Turn off the Authorization check (passthrough tests of unauthenticated paths). */
  requireAuth?: boolean;
  /** Model ids listed by GET /v1/models. */
  models?: string[];
}

const OPENAI_ERROR_TYPES: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  409: ['invalid_request_error', null],
  413: ['invalid_request_error', null],
  422: ['invalid_request_error', null],
  429: ['requests', 'rate_limit_exceeded'],
  500: ['server_error', null],
  503: ['server_error', 'service_unavailable'],
};

export const openAIErrorShape: ErrorShape = (status, message, errorType) => {
  const [type, code] =
    OPENAI_ERROR_TYPES[status] ?? (status >= 500 ? ['server_error', null] : ['invalid_request_error', null]);
  return {
    body: { error: { message, type: errorType ?? type, param: null, code } },
    headers: { 'x-request-id': `req_mock_${Date.now().toString(36)}` },
  };
};

const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

export async function startOpenAIMock(options: OpenAIMockOptions = {}): Promise<MockServer> {
  const models = options.models ?? ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small', 'whisper-1'];
  const requireAuth = options.requireAuth ?? true;

  /** Wraps a route so it answers 401 like OpenAI when the key is missing or wrong. */
  const authed =
    (handler: (context: MockContext) => void | Promise<void>) =>
    (context: MockContext): void | Promise<void> => {
      if (requireAuth) {
        const authorization = headerValue(context.request.headers, 'authorization') ?? '';
        const token = authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
        if (!token || (options.apiKey !== undefined && token !== options.apiKey)) {
          context.error(401, 'Incorrect API key provided.');
          return;
        }
      }
      if (context.request.bodyError) {
        context.error(
          400,
          `We could not parse the JSON body of your request. (${context.request.bodyError})`,
        );
        return;
      }
      return handler(context);
    };

  const server = new MockServer({
    name: 'openai',
    errorShape: openAIErrorShape,
    routes: [
      { method: 'POST', path: '/v1/chat/completions', handler: authed(chatCompletions) },
      { method: 'POST', path: '/v1/completions', handler: authed(textCompletions) },
      { method: 'POST', path: '/v1/embeddings', handler: authed(embeddings) },
      { method: 'POST', path: '/v1/moderations', handler: authed(moderations) },
      { method: 'POST', path: '/v1/audio/transcriptions', handler: authed(transcriptions) },
      {
        method: 'GET',
        path: '/v1/models',
        handler: authed((c) =>
          c.json(200, { object: 'list', data: models.map((id) => modelObject(id)) }, requestIdHeader()),
        ),
      },
      {
        method: 'GET',
        path: /^\/v1\/models\/(.+)$/,
        handler: authed((c) => {
          const id = c.params[0];
          if (!models.includes(id)) return c.error(404, `The model '${id}' does not exist`);
          c.json(200, modelObject(id), requestIdHeader());
        }),
      },
    ],
    fallback: echo,
  });
  return server.listen();
}

function requestIdHeader(): Record<string, string> {
  return { 'x-request-id': `req_mock_${Date.now().toString(36)}`, 'openai-processing-ms': '1' };
}

function modelObject(id: string) {
  return { id, object: 'model', created: 1_700_000_000, owned_by: 'mock' };
}

function usage(context: MockContext, includeDetails = true) {
  const { inputTokens, outputTokens, cachedTokens, reasoningTokens } = context.reply;
  const base = {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
  };
  if (!includeDetails) return base;
  return {
    ...base,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The tool the mock "decides" to call: the forced one, else the first offered; none for tool_choice none. */
function chosenTool(body: Record<string, any>): string | undefined {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  if (tools.length === 0 || body.tool_choice === 'none') return undefined;
  const forced = body.tool_choice?.function?.name;
  return forced ?? tools[0]?.function?.name ?? tools[0]?.name;
}

function validateChat(context: MockContext): boolean {
  const body = context.body;
  if (typeof body.model !== 'string' || body.model === '') {
    context.error(400, 'you must provide a model parameter');
    return false;
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    context.error(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.");
    return false;
  }
  return true;
}

async function chatCompletions(context: MockContext): Promise<void> {
  if (!validateChat(context)) return;
  const body = context.body;
  const id = mockId('chatcmpl-', context.request);
  const created = Math.floor(context.request.receivedAt / 1000);
  const model = body.model as string;
  const tool = chosenTool(body);
  const toolCallId = `call_${context.request.seq}mock`;
  const args = JSON.stringify(context.reply.toolArguments);
  const n = Number.isInteger(body.n) && body.n > 0 ? Math.min(body.n as number, 8) : 1;
  const finishReason = tool ? 'tool_calls' : 'stop';

  if (body.stream !== true) {
    const message = tool
      ? {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: toolCallId, type: 'function', function: { name: tool, arguments: args } }],
          annotations: [],
        }
      : { role: 'assistant', content: context.reply.text, refusal: null, annotations: [] };
    context.json(
      200,
      {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: Array.from({ length: n }, (_, index) => ({
          index,
          message,
          logprobs: null,
          finish_reason: finishReason,
        })),
        usage: usage(context),
        service_tier: 'default',
        system_fingerprint: 'fp_mock',
      },
      requestIdHeader(),
    );
    return;
  }

  const includeUsage = body.stream_options?.include_usage === true;
  // With include_usage every chunk carries `usage: null` and one extra chunk carries the totals.
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    service_tier: 'default',
    system_fingerprint: 'fp_mock',
    choices,
    ...(includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const events: string[] = [];
  for (let index = 0; index < n; index++) {
    if (tool) {
      events.push(
        sseEvent(
          chunk([
            {
              index,
              delta: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  { index: 0, id: toolCallId, type: 'function', function: { name: tool, arguments: '' } },
                ],
              },
              logprobs: null,
              finish_reason: null,
            },
          ]),
        ),
      );
      for (const fragment of splitJson(args)) {
        events.push(
          sseEvent(
            chunk([
              {
                index,
                delta: { tool_calls: [{ index: 0, function: { arguments: fragment } }] },
                logprobs: null,
                finish_reason: null,
              },
            ]),
          ),
        );
      }
    } else {
      events.push(
        sseEvent(
          chunk([
            {
              index,
              delta: { role: 'assistant', content: '', refusal: null },
              logprobs: null,
              finish_reason: null,
            },
          ]),
        ),
      );
      for (const piece of splitText(context.reply.text)) {
        events.push(
          sseEvent(chunk([{ index, delta: { content: piece }, logprobs: null, finish_reason: null }])),
        );
      }
    }
    events.push(sseEvent(chunk([{ index, delta: {}, logprobs: null, finish_reason: finishReason }])));
  }
  if (includeUsage) events.push(sseEvent(chunk([], { usage: usage(context) })));
  events.push(sseEvent('[DONE]'));
  await context.stream(200, { ...SSE_HEADERS, ...requestIdHeader() }, events);
}

async function textCompletions(context: MockContext): Promise<void> {
  const body = context.body;
  if (typeof body.model !== 'string' || body.prompt === undefined) {
    context.error(400, 'you must provide a model and a prompt parameter');
    return;
  }
  const id = mockId('cmpl-', context.request);
  const created = Math.floor(context.request.receivedAt / 1000);
  const text = context.reply.text;
  if (body.stream !== true) {
    context.json(
      200,
      {
        id,
        object: 'text_completion',
        created,
        model: body.model,
        choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
        usage: usage(context, false),
        system_fingerprint: 'fp_mock',
      },
      requestIdHeader(),
    );
    return;
  }
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'text_completion',
    created,
    model: body.model,
    choices,
    system_fingerprint: 'fp_mock',
    ...(includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const pieces = splitText(text);
  const events = pieces.map((piece, i) =>
    sseEvent(
      chunk([
        { text: piece, index: 0, logprobs: null, finish_reason: i === pieces.length - 1 ? 'stop' : null },
      ]),
    ),
  );
  if (includeUsage) events.push(sseEvent(chunk([], { usage: usage(context, false) })));
  events.push(sseEvent('[DONE]'));
  await context.stream(200, { ...SSE_HEADERS, ...requestIdHeader() }, events);
}

function embeddings(context: MockContext): void {
  const body = context.body;
  if (typeof body.model !== 'string' || body.input === undefined) {
    context.error(400, "'input' and 'model' are required");
    return;
  }
  // input: a string, an array of strings, an array of tokens, or an array of token arrays.
  const inputs: string[] =
    typeof body.input === 'string'
      ? [body.input]
      : Array.isArray(body.input) && body.input.every((x: unknown) => typeof x === 'number')
        ? [JSON.stringify(body.input)]
        : (body.input as unknown[]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  const dimensions =
    Number.isInteger(body.dimensions) && body.dimensions > 0
      ? (body.dimensions as number)
      : context.reply.embeddingDimensions;
  const base64 = body.encoding_format === 'base64';
  context.json(
    200,
    {
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = fakeEmbedding(input, dimensions);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
        };
      }),
      model: body.model,
      usage: { prompt_tokens: context.reply.inputTokens, total_tokens: context.reply.inputTokens },
    },
    requestIdHeader(),
  );
}

function moderations(context: MockContext): void {
  const body = context.body;
  if (body.input === undefined) {
    context.error(400, "'input' is a required property");
    return;
  }
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  // A fixed trigger word lets tests see a flagged result without a real classifier.
  const results = inputs.map((input) => {
    const text = typeof input === 'string' ? input : JSON.stringify(input);
    const flagged = /\bviolent\b/i.test(text);
    const categories: Record<string, boolean> = {};
    const scores: Record<string, number> = {};
    const appliedTypes: Record<string, string[]> = {};
    for (const category of MODERATION_CATEGORIES) {
      const hit = flagged && category === 'violence';
      categories[category] = hit;
      scores[category] = hit ? 0.97 : 0.0001;
      appliedTypes[category] = ['text'];
    }
    return { flagged, categories, category_scores: scores, category_applied_input_types: appliedTypes };
  });
  context.json(
    200,
    { id: mockId('modr-', context.request), model: body.model ?? 'omni-moderation-latest', results },
    requestIdHeader(),
  );
}

function transcriptions(context: MockContext): void {
  const form = context.request.body as { fields?: Record<string, unknown>; files?: unknown[] } | undefined;
  if (!form || !Array.isArray(form.files) || form.files.length === 0) {
    context.error(400, "Missing required parameter: 'file'.");
    return;
  }
  const fields = form.fields ?? {};
  if (fields.response_format === 'text') {
    context.send(200, `${context.reply.text}\n`, { 'content-type': 'text/plain; charset=utf-8' });
    return;
  }
  // `text` is the real answer; `mock_echo` lets a test check the multipart arrived intact.
  context.json(
    200,
    {
      text: context.reply.text,
      usage: { type: 'duration', seconds: 1 },
      mock_echo: { fields, files: form.files },
    },
    requestIdHeader(),
  );
}

/** Passthrough target: answers what it received, so a test can assert the forwarded request. */
function echo(context: MockContext): void {
  const { method, path, query, headers, body, rawBody } = context.request;
  context.json(200, {
    method,
    path,
    query,
    headers,
    body: body ?? (rawBody.length > 0 ? rawBody.toString('base64') : null),
    bodyEncoding: body === undefined && rawBody.length > 0 ? 'base64' : 'parsed',
  });
}
