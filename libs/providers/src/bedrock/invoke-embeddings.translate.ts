import { asArray, asNumber, asRecord, asString, type JsonObject } from '../shared/json';
import { ProviderRequestError } from '../shared/errors';

/** Embeddings through InvokeModel, whose body is each model family's native format. */

export type EmbeddingFamily = 'titan' | 'cohere';

export interface EmbeddingList {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Model ids may carry a cross-region prefix (`us.`) or be ARNs, so the family is found anywhere. */
export function embeddingFamily(modelId: string): EmbeddingFamily {
  if (modelId.includes('amazon.titan-embed')) return 'titan';
  if (modelId.includes('cohere.embed')) return 'cohere';
  throw new ProviderRequestError(
    `Bedrock embeddings support Amazon Titan and Cohere embed models, not '${modelId}'`,
    'model',
  );
}

function inputs(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  const list = asArray(input);
  if (list && list.length > 0 && list.every((item): item is string => typeof item === 'string')) return list;
  throw new ProviderRequestError(
    'input must be a string or a non-empty array of strings for Bedrock',
    'input',
  );
}

export function buildInvokeEmbeddingBody(body: JsonObject, family: EmbeddingFamily): JsonObject {
  const texts = inputs(body);
  const dimensions = asNumber(body.dimensions);
  if (family === 'titan') {
    // Titan embeds one text per call; a batch would need several upstream calls.
    if (texts.length !== 1)
      throw new ProviderRequestError('Amazon Titan embeds one input per request', 'input');
    const request: JsonObject = { inputText: texts[0] };
    if (dimensions !== undefined) request.dimensions = dimensions;
    return request;
  }
  const request: JsonObject = {
    texts,
    input_type: asString(body.input_type) ?? 'search_document',
    embedding_types: ['float'],
  };
  if (dimensions !== undefined) request.output_dimension = dimensions;
  const truncate = asString(body.truncate);
  if (truncate) request.truncate = truncate;
  return request;
}

function encode(values: unknown, format: string | undefined): number[] | string {
  const numbers = (asArray(values) ?? []).filter((item): item is number => typeof item === 'number');
  return format === 'base64' ? Buffer.from(new Float32Array(numbers).buffer).toString('base64') : numbers;
}

export function transformInvokeEmbeddingResponse(
  body: unknown,
  family: EmbeddingFamily,
  model: string,
  format: string | undefined,
): EmbeddingList {
  const response = asRecord(body) ?? {};
  if (family === 'titan') {
    const tokens = asNumber(response.inputTextTokenCount) ?? 0;
    return {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: encode(response.embedding, format) }],
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }
  // Cohere answers a bare list of vectors, or vectors keyed by type when `embedding_types` is set.
  const vectors = asArray(response.embeddings) ?? asArray(asRecord(response.embeddings)?.float) ?? [];
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector, format) })),
    model,
    // Cohere on Bedrock reports its token count only in a response header the adapter never sees.
    usage: { prompt_tokens: 0, total_tokens: 0 },
  };
}
