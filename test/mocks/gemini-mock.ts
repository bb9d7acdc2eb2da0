/**
 * Mock of the Gemini API (`generativelanguage.googleapis.com`) and of Vertex AI's publisher-model
 * paths, which answer the same bodies: `models/{model}:generateContent`, `:streamGenerateContent`
 * (`alt=sse` events, else a streamed JSON array), `:embedContent` and `:batchEmbedContents`.
 */
import {
  ErrorShape,
  MockContext,
  MockServer,
  fakeEmbedding,
  headerValue,
  splitText,
  sseEvent,
} from './mock-server';

export interface GeminiMockOptions {
  /** When set, only this key (`x-goog-api-key` or `?key=`) is accepted; Bearer tokens (Vertex) always are. */
  apiKey?: string;
  requireAuth?: boolean;
}

const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export const geminiErrorShape: ErrorShape = (status, message, errorType) => ({
  body: { error: { code: status, message, status: errorType ?? GOOGLE_STATUS[status] ?? 'UNKNOWN' } },
});

/**
 * `/v1beta/models/{model}:{method}` (Gemini API) or
 * `/v1/projects/{p}/locations/{l}/publishers/google/models/{model}:{method}` (Vertex AI).
 * The colon may arrive percent-encoded.
 */
const MODEL_METHOD =
  /^\/(?:v1|v1beta|v1beta1)\/(?:projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/)?models\/([^/:]+?)(?::|%3A)(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/i;

export async function startGeminiMock(options: GeminiMockOptions = {}): Promise<MockServer> {
  const requireAuth = options.requireAuth ?? true;
  const server = new MockServer({
    name: 'gemini',
    errorShape: geminiErrorShape,
    routes: [
      {
        method: 'POST',
        path: MODEL_METHOD,
        handler: (context) => {
          if (requireAuth && !authorized(context, options.apiKey)) {
            return context.error(403, "Method doesn't allow unregistered callers. Please use an API key.");
          }
          if (context.request.bodyError) {
            return context.error(400, `Invalid JSON payload received. ${context.request.bodyError}`);
          }
          const [model, method] = context.params;
          switch (method) {
            case 'generateContent':
              return generate(context, model, false);
            case 'streamGenerateContent':
              return generate(context, model, true);
            case 'embedContent':
              return embed(context, false);
            default:
              return embed(context, true);
          }
        },
      },
    ],
  });
  return server.listen();
}

function authorized(context: MockContext, apiKey: string | undefined): boolean {
  const { headers, query } = context.request;
  if ((headerValue(headers, 'authorization') ?? '').startsWith('Bearer ')) return true;
  const key =
    headerValue(headers, 'x-goog-api-key') ?? (typeof query.key === 'string' ? query.key : undefined);
  return !!key && (apiKey === undefined || key === apiKey);
}

function functionToCall(body: Record<string, any>): string | undefined {
  const mode = body.toolConfig?.functionCallingConfig?.mode;
  if (mode === 'NONE') return undefined;
  const declarations: any[] = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: any) =>
    Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : [],
  );
  const allowed: unknown = body.toolConfig?.functionCallingConfig?.allowedFunctionNames;
  if (Array.isArray(allowed) && typeof allowed[0] === 'string') return allowed[0];
  return declarations[0]?.name;
}

async function generate(context: MockContext, model: string, stream: boolean): Promise<void> {
  const { body, reply, request } = context;
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return context.error(400, '* GenerateContentRequest.contents: contents is not specified');
  }
  const fn = functionToCall(body);
  const wantsThoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
  const responseId = `mock-${request.seq}`;
  const usage = (outputTokens: number) => ({
    promptTokenCount: reply.inputTokens,
    candidatesTokenCount: outputTokens,
    totalTokenCount: reply.inputTokens + outputTokens + reply.reasoningTokens,
    ...(reply.cachedTokens ? { cachedContentTokenCount: reply.cachedTokens } : {}),
    ...(reply.reasoningTokens ? { thoughtsTokenCount: reply.reasoningTokens } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: reply.inputTokens }],
  });
  const response = (parts: unknown[], finishReason: string | undefined, outputTokens: number) => ({
    candidates: [
      {
        content: { parts, role: 'model' },
        ...(finishReason ? { finishReason } : {}),
        index: 0,
      },
    ],
    usageMetadata: usage(outputTokens),
    modelVersion: model,
    responseId,
  });

  const thoughtParts = wantsThoughts ? [{ text: reply.reasoning, thought: true }] : [];
  // Gemini reports STOP for function calls too; there is no separate finish reason.
  if (!stream) {
    const parts = fn
      ? [...thoughtParts, { functionCall: { name: fn, args: reply.toolArguments } }]
      : [...thoughtParts, { text: reply.text }];
    return context.json(200, response(parts, 'STOP', reply.outputTokens));
  }

  // Each streamed record is a whole GenerateContentResponse; usageMetadata is cumulative.
  const records: unknown[] = [];
  if (wantsThoughts) records.push(response(thoughtParts, undefined, 0));
  if (fn) {
    records.push(
      response([{ functionCall: { name: fn, args: reply.toolArguments } }], 'STOP', reply.outputTokens),
    );
  } else {
    const pieces = splitText(reply.text);
    pieces.forEach((piece, i) => {
      const last = i === pieces.length - 1;
      const tokensSoFar = last ? reply.outputTokens : Math.min(i + 1, reply.outputTokens);
      records.push(response([{ text: piece }], last ? 'STOP' : undefined, tokensSoFar));
    });
  }
  if (request.query.alt === 'sse') {
    // Google's SSE uses CRLF line ends; a parser that only splits on "\n\n" fails here.
    return context.stream(
      200,
      { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' },
      records.map((r) => sseEvent(r, undefined, '\r\n\r\n')),
    );
  }
  // Without alt=sse the stream is one JSON array written element by element.
  const chunks = records.map((r, i) => `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(r)}`);
  chunks.push(']');
  return context.stream(200, { 'content-type': 'application/json; charset=UTF-8' }, chunks);
}

function embed(context: MockContext, batch: boolean): void {
  const { body, reply } = context;
  const textOf = (request: any): string =>
    (Array.isArray(request?.content?.parts) ? request.content.parts : [])
      .map((p: any) => p?.text ?? '')
      .join('');
  const dimensions = Number.isInteger(body.outputDimensionality)
    ? body.outputDimensionality
    : reply.embeddingDimensions;
  if (!batch) {
    return context.json(200, { embedding: { values: fakeEmbedding(textOf(body), dimensions) } });
  }
  const requests: any[] = Array.isArray(body.requests) ? body.requests : [];
  context.json(200, {
    embeddings: requests.map((r) => ({
      values: fakeEmbedding(
        textOf(r),
        Number.isInteger(r?.outputDimensionality) ? r.outputDimensionality : dimensions,
      ),
    })),
  });
}
