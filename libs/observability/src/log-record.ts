/**
 * One data-plane request, as the gateway hands it to the log writer. Built on the request path
 * from values already in memory; the writer serialises and stores it in batches, off that path.
 */
export interface LogRecord {
  id: string;
  /** Fastify request id. */
  requestId: string;
  traceId: string;
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  organisationId: string;
  workspaceId: string | null;
  apiKeyId: string | null;
  userId: string | null;
  /** Provider id as in the registry (`openai`, `anthropic`), null when none was resolved. */
  provider: string | null;
  /** Integration/provider slug or virtual key used, when any. */
  providerSlug: string | null;
  model: string | null;
  configId: string | null;
  promptId: string | null;
  /** Gateway route (`chat.completions`) or `passthrough`. */
  route: string;
  method: string;
  path: string;
  status: number;
  isStream: boolean;
  /** Whole request time in ms, to the last byte sent. */
  latencyMs: number;
  /** Time to first byte of the answer body, in ms; null when nothing was sent. */
  ttfbMs: number | null;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** In US dollars; null when pricing is unknown. */
  cost: number | null;
  cacheStatus: 'hit' | 'miss' | 'refresh' | 'disabled';
  retryCount: number;
  metadata: Record<string, string> | null;
  /** Already size-capped by the gateway; null when body logging is off. */
  requestBody: string | null;
  responseBody: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: Date;
}

/** Where the gateway hands its records; the observability module's LogWriter is bound to it. */
export interface LogSink {
  enqueue(record: LogRecord): void;
}

export const LOG_SINK = Symbol('LOG_SINK');
