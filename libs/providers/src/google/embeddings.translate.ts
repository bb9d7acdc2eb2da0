import { asArray, asNumber, asRecord, asString, type JsonObject } from '../shared/json';
import { ProviderRequestError } from '../shared/errors';

export interface EmbeddingList {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** OpenAI `input` as a list of texts; token-id inputs have no Google equivalent. */
export function embeddingInputs(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  const list = asArray(input);
  if (list && list.length > 0 && list.every((item): item is string => typeof item === 'string')) return list;
  throw new ProviderRequestError(
    'input must be a string or a non-empty array of strings for this provider',
    'input',
  );
}

/** Gemini API `batchEmbedContents` body; each request repeats the model as the API requires. */
export function buildBatchEmbedBody(body: JsonObject, model: string): JsonObject {
  const dimensions = asNumber(body.dimensions);
  const taskType = asString(body.task_type);
  return {
    requests: embeddingInputs(body).map((text) => {
      const request: JsonObject = { model: `models/${model}`, content: { parts: [{ text }] } };
      if (taskType) request.taskType = taskType;
      if (dimensions !== undefined) request.outputDimensionality = dimensions;
      return request;
    }),
  };
}

/** Vertex AI `predict` body for text embedding models. */
export function buildVertexPredictBody(body: JsonObject): JsonObject {
  const taskType = asString(body.task_type);
  const request: JsonObject = {
    instances: embeddingInputs(body).map((content) =>
      taskType ? { content, task_type: taskType } : { content },
    ),
  };
  const dimensions = asNumber(body.dimensions);
  if (dimensions !== undefined) request.parameters = { outputDimensionality: dimensions };
  return request;
}

function encode(values: number[], format: string | undefined): number[] | string {
  // OpenAI's base64 format is the little-endian float32 array, which Float32Array gives on every
  // platform Node supports.
  return format === 'base64' ? Buffer.from(new Float32Array(values).buffer).toString('base64') : values;
}

function numbers(value: unknown): number[] {
  return (asArray(value) ?? []).filter((item): item is number => typeof item === 'number');
}

export function transformBatchEmbedResponse(
  body: unknown,
  model: string,
  format: string | undefined,
): EmbeddingList {
  const embeddings = asArray(asRecord(body)?.embeddings) ?? [];
  return {
    object: 'list',
    data: embeddings.map((item, index) => ({
      object: 'embedding',
      index,
      embedding: encode(numbers(asRecord(item)?.values), format),
    })),
    model,
    // The Gemini API does not report token counts for embeddings.
    usage: { prompt_tokens: 0, total_tokens: 0 },
  };
}

export function transformVertexPredictResponse(
  body: unknown,
  model: string,
  format: string | undefined,
): EmbeddingList {
  const predictions = asArray(asRecord(body)?.predictions) ?? [];
  let tokens = 0;
  const data = predictions.map((item, index) => {
    const embeddings = asRecord(asRecord(item)?.embeddings);
    tokens += asNumber(asRecord(embeddings?.statistics)?.token_count) ?? 0;
    return { object: 'embedding' as const, index, embedding: encode(numbers(embeddings?.values), format) };
  });
  return {
    object: 'list',
    data,
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
