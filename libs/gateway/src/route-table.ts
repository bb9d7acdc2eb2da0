import type { GatewayRoute } from '@switchboard/providers';

/** Routes whose body is multipart and is forwarded byte for byte. */
export const MULTIPART_GATEWAY_ROUTES: ReadonlySet<GatewayRoute> = new Set([
  'audio.transcriptions',
  'audio.translations',
  'images.edits',
  'images.variations',
]);

/** OpenAI resource families forwarded in the OpenAI shape (`openai.proxy`). */
export const OPENAI_PROXY_PREFIXES = [
  'files',
  'batches',
  'fine_tuning',
  'assistants',
  'threads',
  'vector_stores',
  'uploads',
] as const;
