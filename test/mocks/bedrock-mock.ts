/**
 * Mock of the Bedrock Runtime Converse API: POST /model/{modelId}/converse (JSON) and
 * /model/{modelId}/converse-stream (AWS binary event-stream, `application/vnd.amazon.eventstream`).
 * Requests must carry a SigV4 `Authorization` header; with `credentials` the signature is verified.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import {
  ErrorShape,
  MockContext,
  MockServer,
  RecordedRequest,
  headerValue,
  mockId,
  splitJson,
  splitText,
} from './mock-server';

export interface BedrockMockOptions {
  /** When given, the SigV4 signature is recomputed and must match; otherwise only its presence is checked. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

const AWS_ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** AWS JSON errors name their type in a header; the body only has the message. */
export const bedrockErrorShape: ErrorShape = (status, message, errorType) => {
  const type =
    errorType ??
    AWS_ERROR_TYPES[status] ??
    (status >= 500 ? 'InternalServerException' : 'ValidationException');
  return {
    body: { message },
    headers: {
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': `mock-${Date.now().toString(36)}`,
    },
  };
};

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Encodes one event-stream frame the way Bedrock frames each ConverseStream event. */
export function encodeBedrockEvent(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** Decodes a whole event-stream body into (event type, JSON payload) pairs; for tests. */
export function decodeBedrockEvents(bytes: Uint8Array): { eventType: string; payload: any }[] {
  const out: { eventType: string; payload: any }[] = [];
  let offset = 0;
  while (offset + 4 <= bytes.length) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0);
    const message = codec.decode(bytes.subarray(offset, offset + length));
    const type = message.headers[':event-type'] ?? message.headers[':exception-type'];
    out.push({ eventType: String(type?.value), payload: JSON.parse(toUtf8(message.body)) });
    offset += length;
  }
  return out;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

export async function startBedrockMock(options: BedrockMockOptions = {}): Promise<MockServer> {
  const server = new MockServer({
    name: 'bedrock',
    errorShape: bedrockErrorShape,
    routes: [
      {
        method: 'POST',
        path: ROUTE,
        handler: async (context) => {
          const problem = await checkSignature(context.request, options.credentials);
          if (problem) return context.error(403, problem.message, problem.type);
          if (context.request.bodyError)
            return context.error(400, 'Malformed input request, please reformat');
          const [modelId, operation] = context.params;
          return converse(context, modelId, operation === 'converse-stream');
        },
      },
    ],
  });
  return server.listen();
}

async function checkSignature(
  request: RecordedRequest,
  credentials: BedrockMockOptions['credentials'],
): Promise<{ message: string; type: string } | undefined> {
  const authorization = headerValue(request.headers, 'authorization') ?? '';
  const parsed =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!parsed)
    return { message: 'Missing Authentication Token', type: 'MissingAuthenticationTokenException' };
  const amzDate = headerValue(request.headers, 'x-amz-date');
  if (!amzDate) return { message: 'Missing x-amz-date', type: 'IncompleteSignatureException' };
  if (!credentials) return undefined;

  const [, accessKeyId, , region, service, signedHeaderList, signature] = parsed;
  if (accessKeyId !== credentials.accessKeyId) {
    return {
      message: 'The security token included in the request is invalid.',
      type: 'UnrecognizedClientException',
    };
  }
  const signedHeaders = signedHeaderList.split(';');
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = request.headers[name];
    headers[name] = Array.isArray(value) ? value.join(',') : (value ?? '');
  }
  // Recompute over the raw path as received: the signer encodes it once more, as AWS does.
  const signer = new SignatureV4({ credentials, region, service, sha256: Sha256, uriEscapePath: true });
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const signed = await signer.sign(
    new HttpRequest({
      method: request.method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      path: request.path,
      query: request.query,
      headers,
      body: request.rawBody,
    }),
    { signingDate, signableHeaders: new Set(signedHeaders) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization ?? ''))?.[1];
  if (expected !== signature) {
    return {
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
      type: 'InvalidSignatureException',
    };
  }
  return undefined;
}

function toolToUse(body: Record<string, any>): string | undefined {
  const tools: any[] = Array.isArray(body.toolConfig?.tools) ? body.toolConfig.tools : [];
  if (tools.length === 0) return undefined;
  return body.toolConfig?.toolChoice?.tool?.name ?? tools[0]?.toolSpec?.name;
}

function wantsReasoning(body: Record<string, any>): boolean {
  const extra = body.additionalModelRequestFields ?? {};
  return extra.thinking?.type === 'enabled' || extra.reasoning_config?.type === 'enabled';
}

/** Bedrock pads event payloads with a `p` field of varying length; adapters must ignore it. */
function padded<T extends Record<string, unknown>>(payload: T, seed: number): T & { p: string } {
  return { ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEF'.slice(0, 4 + (seed % 24)) };
}

async function converse(context: MockContext, modelId: string, stream: boolean): Promise<void> {
  const { body, reply, request } = context;
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return context.error(
      400,
      'A conversation must start with a user message. Try again with a conversation that starts with a user message.',
    );
  }
  const tool = toolToUse(body);
  const reasoning = wantsReasoning(body);
  const stopReason = tool ? 'tool_use' : 'end_turn';
  const toolUseId = mockId('tooluse_', request);
  const usage = {
    inputTokens: reply.inputTokens,
    outputTokens: reply.outputTokens,
    totalTokens: reply.inputTokens + reply.outputTokens,
    ...(reply.cachedTokens ? { cacheReadInputTokens: reply.cachedTokens, cacheWriteInputTokens: 0 } : {}),
  };
  const headers = { 'x-amzn-requestid': `mock-${request.seq}`, 'x-amzn-bedrock-model-id': modelId };

  if (!stream) {
    const content: unknown[] = [];
    if (reasoning)
      content.push({
        reasoningContent: { reasoningText: { text: reply.reasoning, signature: 'mock-signature' } },
      });
    content.push(
      tool ? { toolUse: { toolUseId, name: tool, input: reply.toolArguments } } : { text: reply.text },
    );
    return context.json(
      200,
      { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 42 } },
      headers,
    );
  }

  const frames: Uint8Array[] = [];
  let seq = 0;
  const emit = (type: string, payload: Record<string, unknown>) =>
    frames.push(encodeBedrockEvent(type, padded(payload, seq++)));
  emit('messageStart', { role: 'assistant' });
  let index = 0;
  if (reasoning) {
    for (const piece of splitText(reply.reasoning)) {
      emit('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: piece } } });
    }
    emit('contentBlockDelta', {
      contentBlockIndex: index,
      delta: { reasoningContent: { signature: 'mock-signature' } },
    });
    emit('contentBlockStop', { contentBlockIndex: index });
    index += 1;
  }
  if (tool) {
    // Only tool-use blocks open with contentBlockStart; text blocks begin with their first delta.
    emit('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId, name: tool } } });
    for (const fragment of splitJson(JSON.stringify(reply.toolArguments))) {
      emit('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: fragment } } });
    }
  } else {
    for (const piece of splitText(reply.text)) {
      emit('contentBlockDelta', { contentBlockIndex: index, delta: { text: piece } });
    }
  }
  emit('contentBlockStop', { contentBlockIndex: index });
  emit('messageStop', { stopReason });
  emit('metadata', { usage, metrics: { latencyMs: 42 } });
  await context.stream(200, { 'content-type': 'application/vnd.amazon.eventstream', ...headers }, frames);
}
