/**
 * The contract between the gateway pipeline and a provider adapter.
 *
 * Adapters are pure: they turn an OpenAI-shaped request into the upstream HTTP request, and the
 * upstream answer (JSON or a stream of bytes) back into the OpenAI shape. They never do I/O and
 * never import Nest; the gateway owns sockets, retries, timeouts, logging and accounting.
 */

/** Routes the gateway understands. Anything else is passthrough. */
export type GatewayRoute =
  | 'chat.completions'
  | 'completions'
  | 'embeddings'
  | 'moderations'
  | 'images.generations'
  | 'images.edits'
  | 'images.variations'
  | 'audio.speech'
  | 'audio.transcriptions'
  | 'audio.translations'
  | 'rerank'
  | 'messages'
  | 'responses'
  | 'models.list'
  | 'models.retrieve'
  /** files, batches, fine_tuning, assistants, threads, vector_stores: forwarded in the OpenAI shape. */
  | 'openai.proxy';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/**
 * Everything needed to reach and authenticate against one provider account. The gateway fills it
 * from direct headers, a virtual key, a provider slug or a config target.
 */
export interface ProviderCredentials {
  /** Bearer / x-api-key style secret. */
  apiKey?: string;
  /** Overrides the adapter's base URL (self-hosted endpoints, `x-gateway-custom-host`). */
  customHost?: string;
  /** Azure OpenAI. */
  azureResourceName?: string;
  azureDeploymentId?: string;
  azureApiVersion?: string;
  /** When set, Azure is called with `Authorization: Bearer <token>` (Entra ID) instead of api-key. */
  azureEntraToken?: string;
  azureEntraScope?: string;
  /** AWS Bedrock. */
  awsAccessKeyId?: string;
  awsSecretAccessKey?: string;
  awsSessionToken?: string;
  awsRegion?: string;
  /** Google Vertex AI: an OAuth access token minted by the integrations layer. */
  vertexProjectId?: string;
  vertexRegion?: string;
  vertexAccessToken?: string;
  /** Anthropic. */
  anthropicVersion?: string;
  anthropicBeta?: string;
  /** OpenAI organisation / project headers. */
  openaiOrganization?: string;
  openaiProject?: string;
}

export interface RequestContext {
  route: GatewayRoute;
  /** Parsed JSON body for JSON routes; undefined for GET and multipart routes. */
  body?: Record<string, unknown>;
  /** Raw body for multipart routes (forwarded intact), with its content type. */
  rawBody?: Uint8Array;
  rawContentType?: string;
  /** For `openai.proxy`: method and path after `/v1` (e.g. `/files/file-abc/content`) plus query string. */
  method: HttpMethod;
  path: string;
  credentials: ProviderCredentials;
  stream: boolean;
  /** `stream_options.include_usage` */
  includeUsage: boolean;
  /** When false, provider-only fields (thinking blocks, citations) may appear in the answer. */
  strictOpenAiCompliance: boolean;
  /** Incoming headers the caller asked to forward (already filtered by the gateway). */
  forwardHeaders?: Record<string, string>;
}

export interface UpstreamRequest {
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** OpenAI error envelope parts. */
export interface ProviderError {
  message: string;
  type: string | null;
  param: string | null;
  code: string | null;
}

/** Token usage in the OpenAI shape, with the details the cost function needs. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number; cache_creation_tokens?: number };
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  };
}

/**
 * Turns a stream of upstream bytes into OpenAI-shaped chunks. `write` is called once per network
 * chunk as it arrives (a chunk may hold a partial event or several events). Returned objects are
 * serialized by the gateway as `data: <json>\n\n`; the gateway writes `data: [DONE]` itself.
 */
export interface StreamTranslator {
  write(chunk: Uint8Array): object[];
  /** Upstream ended: flush anything pending. When includeUsage is set, the last object is the usage chunk. */
  end(): object[];
  /** Usage seen so far (for logs and accounting), available after end(). */
  usage(): Usage | undefined;
}

export interface ProviderAdapter {
  /** Provider name as clients pass it in `x-gateway-provider` (e.g. `openai`, `anthropic`, `bedrock`). */
  readonly id: string;
  readonly displayName: string;
  /** Routes this provider can serve. A route outside it answers 400 naming the provider and the route. */
  readonly routes: ReadonlySet<GatewayRoute>;
  /**
   * True when the provider speaks the OpenAI wire format for `route`: the gateway then forwards the
   * answer bytes untouched (JSON and SSE), and only reads usage from them.
   */
  isOpenAiNative(route: GatewayRoute): boolean;
  /**
   * Optional; absent means false. True when the answer for `route` is already in the shape the
   * client asked for although it is not OpenAI-shaped (the anthropic adapter's own `messages`
   * route). The gateway then forwards the answer bytes untouched (JSON and SSE, whose `event:`
   * lines clients need), exactly as for isOpenAiNative, but reads usage with `extractUsage` on the
   * JSON body and, for streams, by feeding the same bytes to `createStreamTranslator(ctx)` and
   * ignoring what it returns (only its `usage()` matters). `transformResponse` returns the body
   * unchanged for such a route, so a gateway unaware of this flag still answers correctly for JSON.
   */
  isNativePassthrough?(route: GatewayRoute): boolean;
  /** Build the upstream request. Async because some providers sign requests (SigV4). */
  buildRequest(ctx: RequestContext): UpstreamRequest | Promise<UpstreamRequest>;
  /** Translate a successful (2xx) JSON answer to the OpenAI shape. */
  transformResponse(ctx: RequestContext, body: unknown): unknown;
  /**
   * A translator for one streamed answer; not called when isOpenAiNative(route). When
   * isNativePassthrough(route), it is fed the forwarded bytes for usage only.
   */
  createStreamTranslator(ctx: RequestContext): StreamTranslator;
  /** Read the error out of a non-2xx answer (body already parsed when JSON, else the text). */
  transformError(status: number, body: unknown): ProviderError;
  /**
   * Read usage out of a successful non-streamed answer: in OpenAI shape, or in the provider's own
   * shape when isNativePassthrough(route).
   */
  extractUsage?(route: GatewayRoute, body: unknown): Usage | undefined;
}
