import type { RequestContext, Usage } from '../types';
import { buildChatCompletion, ChatCompletion, ContentBlock, ToolCall } from '../shared/chat-completion';
import { ProviderRequestError } from '../shared/errors';
import { COHERE_FINISH_REASONS, mapFinishReason } from '../shared/finish-reason';
import { generateChatCompletionId } from '../shared/ids';
import { asArray, asNumber, asRecord, asString, JsonObject } from '../shared/json';
import { functionTools, maxOutputTokens, readToolChoice, stopSequences } from '../shared/openai-request';
import { buildUsage } from '../shared/usage';

/**
 * Cohere v2 (`/v2/chat`, `/v2/embed`, `/v2/rerank`). Chat messages are close to OpenAI's; the
 * differences are in parameter names, tool choice, and the answer and event envelopes.
 */

function cohereContent(content: unknown): unknown {
  if (typeof content === 'string' || content === null || content === undefined) return content ?? '';
  const parts: JsonObject[] = [];
  for (const item of asArray(content) ?? []) {
    const part = asRecord(item);
    if (!part) continue;
    if (part.type === 'text') parts.push({ type: 'text', text: asString(part.text) ?? '' });
    else if (part.type === 'image_url') parts.push({ type: 'image_url', image_url: part.image_url });
    else
      throw new ProviderRequestError(`Cohere does not accept ${String(part.type)} content parts`, 'messages');
  }
  return parts;
}

function cohereMessage(message: JsonObject): JsonObject {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: cohereContent(message.content) };
    case 'user':
      return { role: 'user', content: cohereContent(message.content) };
    case 'assistant': {
      const out: JsonObject = { role: 'assistant' };
      const toolCalls = asArray(message.tool_calls);
      if (message.content !== null && message.content !== undefined && message.content !== '') {
        out.content = cohereContent(message.content);
      }
      if (toolCalls && toolCalls.length > 0) {
        out.tool_calls = toolCalls.map((item) => {
          const call = asRecord(item) ?? {};
          const fn = asRecord(call.function) ?? {};
          return {
            id: asString(call.id) ?? '',
            type: 'function',
            function: { name: asString(fn.name) ?? '', arguments: asString(fn.arguments) ?? '{}' },
          };
        });
      }
      return out;
    }
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: asString(message.tool_call_id) ?? '',
        content: cohereContent(message.content),
      };
    default:
      throw new ProviderRequestError(`Cohere does not accept the ${String(message.role)} role`, 'messages');
  }
}

function cohereResponseFormat(value: unknown): JsonObject | undefined {
  const format = asRecord(value);
  if (!format) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema = asRecord(asRecord(format.json_schema)?.schema);
    return schema ? { type: 'json_object', json_schema: schema } : { type: 'json_object' };
  }
  return undefined;
}

/** An OpenAI chat request as a Cohere `/v2/chat` body. */
export function buildCohereChatBody(body: JsonObject): JsonObject {
  const n = asNumber(body.n);
  if (n !== undefined && n > 1)
    throw new ProviderRequestError('Cohere returns one choice per request (n must be 1)', 'n');
  const out: JsonObject = {
    model: body.model,
    messages: (asArray(body.messages) ?? []).map((message) => cohereMessage(asRecord(message) ?? {})),
  };
  if (body.stream === true) out.stream = true;
  const maxTokens = maxOutputTokens(body);
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  const stop = stopSequences(body.stop);
  if (stop) out.stop_sequences = stop;
  if (body.temperature !== undefined && body.temperature !== null) out.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) out.p = body.top_p;
  if (body.top_k !== undefined) out.k = body.top_k;
  for (const key of ['seed', 'frequency_penalty', 'presence_penalty'] as const) {
    if (body[key] !== undefined && body[key] !== null) out[key] = body[key];
  }
  const tools = functionTools(body);
  if (tools.length > 0) {
    out.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
      },
    }));
  }
  // Cohere's tool_choice knows only REQUIRED and NONE; naming one function leaves `tools` to
  // that function alone, which forces the same choice.
  const choice = readToolChoice(body);
  if (choice?.type === 'required') out.tool_choice = 'REQUIRED';
  else if (choice?.type === 'none') out.tool_choice = 'NONE';
  else if (choice?.type === 'function' && Array.isArray(out.tools)) {
    out.tools = out.tools.filter((tool) => asRecord(asRecord(tool)?.function)?.name === choice.name);
    out.tool_choice = 'REQUIRED';
  }
  const format = cohereResponseFormat(body.response_format);
  if (format) out.response_format = format;
  return out;
}

/** Cohere usage: actual `tokens` when present, else `billed_units`. */
export function cohereUsage(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  if (!usage) return undefined;
  const counters = asRecord(usage.tokens) ?? asRecord(usage.billed_units);
  if (!counters) return undefined;
  const input = asNumber(counters.input_tokens);
  const output = asNumber(counters.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  return buildUsage({ inputTokens: input, outputTokens: output });
}

export function cohereToolCalls(value: unknown): ToolCall[] {
  return (asArray(value) ?? []).map((item) => {
    const call = asRecord(item) ?? {};
    const fn = asRecord(call.function) ?? {};
    return {
      id: asString(call.id) ?? '',
      type: 'function',
      function: { name: asString(fn.name) ?? '', arguments: asString(fn.arguments) ?? '{}' },
    };
  });
}

/** A Cohere `/v2/chat` answer as an OpenAI chat.completion. */
export function transformCohereChat(body: unknown, ctx: RequestContext): ChatCompletion {
  const answer = asRecord(body) ?? {};
  const message = asRecord(answer.message) ?? {};
  let text = '';
  let sawText = false;
  const blocks: ContentBlock[] = [];
  for (const item of asArray(message.content) ?? []) {
    const part = asRecord(item);
    if (!part) continue;
    if (part.type === 'text') {
      text += asString(part.text) ?? '';
      sawText = true;
      blocks.push({ type: 'text', text: asString(part.text) ?? '' });
    } else if (part.type === 'thinking') {
      blocks.push({ type: 'thinking', thinking: asString(part.thinking) ?? '' });
    }
  }
  const toolCalls = cohereToolCalls(message.tool_calls);
  const hasThinking = blocks.some((block) => block.type === 'thinking');
  return buildChatCompletion({
    id: asString(answer.id),
    model: asString(ctx.body?.model) ?? '',
    content: sawText ? text : toolCalls.length > 0 ? null : '',
    toolCalls,
    contentBlocks: !ctx.strictOpenAiCompliance && hasThinking ? blocks : undefined,
    finishReason: mapFinishReason(COHERE_FINISH_REASONS, asString(answer.finish_reason)) ?? 'stop',
    usage: cohereUsage(answer.usage),
  });
}

const COHERE_EMBEDDING_TYPES: Record<string, string> = { float: 'float', base64: 'base64' };

/** An OpenAI embeddings request as a Cohere `/v2/embed` body (text inputs). */
export function buildCohereEmbedBody(body: JsonObject): JsonObject {
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : asArray(input);
  if (!texts || texts.some((text) => typeof text !== 'string')) {
    throw new ProviderRequestError(
      'Cohere embeddings take text input (a string or a list of strings)',
      'input',
    );
  }
  const encoding = asString(body.encoding_format) ?? 'float';
  const out: JsonObject = {
    model: body.model,
    texts,
    // Required by the v3+ embedding models; documents are the common case.
    input_type: asString(body.input_type) ?? 'search_document',
    embedding_types: [COHERE_EMBEDDING_TYPES[encoding] ?? 'float'],
  };
  if (body.dimensions !== undefined) out.output_dimension = body.dimensions;
  if (body.truncate !== undefined) out.truncate = body.truncate;
  return out;
}

export function transformCohereEmbed(body: unknown, ctx: RequestContext): JsonObject {
  const answer = asRecord(body) ?? {};
  const embeddings = asRecord(answer.embeddings) ?? {};
  const vectors = asArray(embeddings.float) ?? asArray(embeddings.base64) ?? [];
  const inputTokens = asNumber(asRecord(asRecord(answer.meta)?.billed_units)?.input_tokens) ?? 0;
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: asString(ctx.body?.model) ?? '',
    usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
  };
}

/** Rerank: v2 wants plain-text documents. */
export function buildCohereRerankBody(body: JsonObject): JsonObject {
  const documents = (asArray(body.documents) ?? []).map((document) => {
    if (typeof document === 'string') return document;
    const record = asRecord(document);
    return record ? (asString(record.text) ?? JSON.stringify(record)) : String(document);
  });
  const out: JsonObject = { model: body.model, query: body.query, documents };
  if (body.top_n !== undefined) out.top_n = body.top_n;
  if (body.max_tokens_per_doc !== undefined) out.max_tokens_per_doc = body.max_tokens_per_doc;
  if (body.priority !== undefined) out.priority = body.priority;
  return out;
}

/**
 * Cohere v2 returns no documents; when the caller asked for them they are taken from the request,
 * by index.
 */
export function transformCohereRerank(body: unknown, ctx: RequestContext): JsonObject {
  const answer = asRecord(body) ?? {};
  const requested = asArray(ctx.body?.documents) ?? [];
  const withDocuments = ctx.body?.return_documents === true;
  const results = (asArray(answer.results) ?? []).flatMap((item) => {
    const result = asRecord(item);
    const index = result ? asNumber(result.index) : undefined;
    const score = result ? asNumber(result.relevance_score) : undefined;
    if (index === undefined || score === undefined) return [];
    const out: JsonObject = { index, relevance_score: score };
    if (withDocuments && requested[index] !== undefined) {
      const document = requested[index];
      out.document = typeof document === 'string' ? { text: document } : document;
    }
    return [out];
  });
  const out: JsonObject = {
    object: 'list',
    id: asString(answer.id) ?? `rerank-${generateChatCompletionId().slice(9)}`,
    model: asString(ctx.body?.model) ?? '',
    results,
    provider: 'cohere',
  };
  const searchUnits = asNumber(asRecord(asRecord(answer.meta)?.billed_units)?.search_units);
  if (searchUnits !== undefined) out.usage = { search_units: searchUnits };
  return out;
}
