import type { RequestContext, StreamTranslator, Usage } from '../types';
import { ChatChunkFactory } from '../shared/chat-completion';
import { asArray, asNumber, asRecord, asString, isRecord, JsonObject, tryParseJson } from '../shared/json';
import { SseParser } from '../shared/sse-parser';
import { readOpenAiUsage } from '../shared/usage';
import type { RouteTranslation } from './openai-compatible.adapter';
import { generateChatCompletionId, unixSeconds } from '../shared/ids';

/**
 * Translations for the few routes where an otherwise OpenAI-compatible provider speaks its own
 * dialect: rerank (no OpenAI standard exists), Nomic embeddings and Mistral fill-in-the-middle.
 */

function copyDefined(source: JsonObject, keys: readonly string[], target: JsonObject = {}): JsonObject {
  for (const key of keys) if (source[key] !== undefined) target[key] = source[key];
  return target;
}

/** Rerank documents may be strings or `{text}` objects; providers that want strings get the text. */
function documentTexts(documents: unknown): string[] {
  return (asArray(documents) ?? []).map((document) => {
    if (typeof document === 'string') return document;
    const record = asRecord(document);
    return record ? (asString(record.text) ?? JSON.stringify(record)) : String(document);
  });
}

interface RerankResult {
  index: number;
  relevance_score: number;
  document?: unknown;
}

function rerankResults(items: unknown): RerankResult[] {
  const results: RerankResult[] = [];
  for (const item of asArray(items) ?? []) {
    const record = asRecord(item);
    const index = record ? asNumber(record.index) : undefined;
    const score = record ? (asNumber(record.relevance_score) ?? asNumber(record.score)) : undefined;
    if (!record || index === undefined || score === undefined) continue;
    const result: RerankResult = { index, relevance_score: score };
    if (record.document !== undefined && record.document !== null) {
      result.document = typeof record.document === 'string' ? { text: record.document } : record.document;
    }
    results.push(result);
  }
  return results;
}

/** The gateway's rerank answer: `{object: "list", id, model, results, usage, provider}`. */
function rerankAnswer(provider: string, body: unknown, ctx: RequestContext, results: unknown): JsonObject {
  const record = asRecord(body) ?? {};
  const answer: JsonObject = {
    object: 'list',
    id: asString(record.id) ?? `rerank-${generateChatCompletionId().slice(9)}`,
    model: asString(record.model) ?? asString(ctx.body?.model) ?? '',
    results: rerankResults(results),
    provider,
  };
  const usage = asRecord(record.usage);
  const totalTokens = usage ? asNumber(usage.total_tokens) : undefined;
  if (totalTokens !== undefined) answer.usage = { prompt_tokens: totalTokens, total_tokens: totalTokens };
  return answer;
}

/** Rerank for APIs whose request and `results` match the gateway's shape (Jina, vLLM, Together). */
export function jinaStyleRerank(provider: string): RouteTranslation {
  return {
    path: '/rerank',
    request: (body) => copyDefined(body, ['model', 'query', 'documents', 'top_n', 'return_documents']),
    response: (body, ctx) => rerankAnswer(provider, body, ctx, asRecord(body)?.results),
  };
}

/** Voyage names the result list `data` and the cut-off `top_k`, and wants plain-text documents. */
export const voyageRerank: RouteTranslation = {
  path: '/rerank',
  request: (body) => {
    const out = copyDefined(body, ['model', 'query', 'return_documents', 'truncation']);
    out.documents = documentTexts(body.documents);
    if (body.top_n !== undefined) out.top_k = body.top_n;
    return out;
  },
  response: (body, ctx) => rerankAnswer('voyage', body, ctx, asRecord(body)?.data),
};

/**
 * Nomic's text embedding endpoint: `{model, texts, task_type}` in, `{embeddings, usage}` out.
 * Nomic requires a task type; `search_document` is its documented default.
 */
export const nomicEmbeddings: RouteTranslation = {
  path: '/embedding/text',
  request: (body) => {
    const input = body.input;
    const out: JsonObject = {
      model: body.model,
      texts: typeof input === 'string' ? [input] : input,
      task_type: asString(body.task_type) ?? 'search_document',
    };
    if (body.dimensions !== undefined) out.dimensionality = body.dimensions;
    return out;
  },
  response: (body, ctx) => {
    const record = asRecord(body) ?? {};
    const embeddings = asArray(record.embeddings) ?? [];
    const answer: JsonObject = {
      object: 'list',
      data: embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model: asString(record.model) ?? asString(ctx.body?.model) ?? '',
    };
    const usage = readOpenAiUsage(record.usage);
    if (usage) answer.usage = { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens };
    return answer;
  },
};

/**
 * Mistral fill-in-the-middle serves the OpenAI `completions` route (prompt + suffix) but answers
 * in the chat shape; the text completion shape is rebuilt from it.
 */
export const mistralFillInTheMiddle: RouteTranslation = {
  path: '/fim/completions',
  request: (body) => {
    const out = copyDefined(body, [
      'model',
      'prompt',
      'suffix',
      'max_tokens',
      'min_tokens',
      'temperature',
      'top_p',
      'stop',
      'stream',
    ]);
    if (body.seed !== undefined) out.random_seed = body.seed;
    return out;
  },
  response: (body) => chatToTextCompletion(body),
  stream: (ctx) => chatStreamToTextCompletionStream(ctx),
};

function chatToTextCompletion(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const choices = (asArray(body.choices) ?? []).map((choice, position) => {
    const record = asRecord(choice) ?? {};
    const message = asRecord(record.message);
    return {
      index: asNumber(record.index) ?? position,
      text: (message && asString(message.content)) ?? '',
      logprobs: null,
      finish_reason: record.finish_reason ?? null,
    };
  });
  const answer: JsonObject = {
    id: asString(body.id) ?? generateChatCompletionId(),
    object: 'text_completion',
    created: asNumber(body.created) ?? unixSeconds(),
    model: asString(body.model) ?? '',
    choices,
  };
  const usage = readOpenAiUsage(body.usage);
  if (usage) answer.usage = usage;
  return answer;
}

function chatStreamToTextCompletionStream(ctx: RequestContext): StreamTranslator {
  const parser = new SseParser();
  const ids = new ChatChunkFactory();
  let usage: Usage | undefined;
  let usageEmitted = false;

  const handle = (data: string, out: object[]): void => {
    if (data === '[DONE]') return;
    const chunk = asRecord(tryParseJson(data));
    if (!chunk) return;
    if (typeof chunk.id === 'string') ids.id = chunk.id;
    if (typeof chunk.model === 'string') ids.model = chunk.model;
    const chunkUsage = readOpenAiUsage(chunk.usage);
    if (chunkUsage) usage = chunkUsage;
    const choices = (asArray(chunk.choices) ?? []).map((choice, position) => {
      const record = asRecord(choice) ?? {};
      const delta = asRecord(record.delta);
      return {
        index: asNumber(record.index) ?? position,
        text: (delta && asString(delta.content)) ?? '',
        logprobs: null,
        finish_reason: record.finish_reason ?? null,
      };
    });
    if (choices.length > 0) {
      out.push({ id: ids.id, object: 'text_completion', created: ids.created, model: ids.model, choices });
    }
  };

  return {
    write(bytes: Uint8Array): object[] {
      const out: object[] = [];
      for (const event of parser.feed(bytes)) handle(event.data, out);
      return out;
    },
    end(): object[] {
      const out: object[] = [];
      for (const event of parser.end()) handle(event.data, out);
      if (ctx.includeUsage && usage && !usageEmitted) {
        usageEmitted = true;
        out.push({
          id: ids.id,
          object: 'text_completion',
          created: ids.created,
          model: ids.model,
          choices: [],
          usage,
        });
      }
      return out;
    },
    usage: () => usage,
  };
}
