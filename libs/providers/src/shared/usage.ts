import type { Usage } from '../types';
import { asNumber, asRecord, isRecord } from './json';
import { SseParser } from './sse-parser';

export interface UsageParts {
  /** Input tokens billed at the normal rate (not read from or written to a cache). */
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
  reasoningTokens?: number;
}

/**
 * Builds an OpenAI usage object. In the OpenAI shape `prompt_tokens` counts every input token,
 * cached or not, so cache reads and writes are added to it and also reported in the details.
 */
export function buildUsage(parts: UsageParts): Usage {
  const cacheRead = parts.cacheReadTokens ?? 0;
  const cacheCreation = parts.cacheCreationTokens ?? 0;
  const promptTokens = (parts.inputTokens ?? 0) + cacheRead + cacheCreation;
  const completionTokens = parts.outputTokens ?? 0;
  const usage: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (parts.cacheReadTokens !== undefined || parts.cacheCreationTokens !== undefined) {
    usage.prompt_tokens_details = { cached_tokens: cacheRead };
    if (parts.cacheCreationTokens !== undefined)
      usage.prompt_tokens_details.cache_creation_tokens = cacheCreation;
  }
  if (parts.reasoningTokens !== undefined) {
    usage.completion_tokens_details = { reasoning_tokens: parts.reasoningTokens };
  }
  return usage;
}

function copyNumericFields<T extends object>(source: unknown): T | undefined {
  const record = asRecord(source);
  if (!record) return undefined;
  const out: Record<string, number> = {};
  let any = false;
  for (const key of Object.keys(record)) {
    const value = asNumber(record[key]);
    if (value !== undefined) {
      out[key] = value;
      any = true;
    }
  }
  return any ? (out as T) : undefined;
}

/**
 * Reads an OpenAI-shaped usage object (chat, completions, embeddings, responses API) into `Usage`.
 * The Responses API names the counters input/output tokens; both namings are accepted.
 */
export function readOpenAiUsage(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  if (!usage) return undefined;
  const prompt = asNumber(usage.prompt_tokens) ?? asNumber(usage.input_tokens);
  const completion = asNumber(usage.completion_tokens) ?? asNumber(usage.output_tokens) ?? 0;
  if (prompt === undefined && asNumber(usage.total_tokens) === undefined) return undefined;
  // Embedding and rerank answers (Voyage, Jina) report only total_tokens, all of them input.
  const promptTokens = prompt ?? (completion === 0 ? (asNumber(usage.total_tokens) ?? 0) : 0);
  const result: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: asNumber(usage.total_tokens) ?? promptTokens + completion,
  };
  const promptDetails = copyNumericFields<NonNullable<Usage['prompt_tokens_details']>>(
    usage.prompt_tokens_details ?? usage.input_tokens_details,
  );
  if (promptDetails) result.prompt_tokens_details = promptDetails;
  const completionDetails = copyNumericFields<NonNullable<Usage['completion_tokens_details']>>(
    usage.completion_tokens_details ?? usage.output_tokens_details,
  );
  if (completionDetails) result.completion_tokens_details = completionDetails;
  return result;
}

/** Usage of a non-streamed OpenAI-native answer (the parsed JSON body). */
export function extractOpenAiUsage(body: unknown): Usage | undefined {
  if (!isRecord(body)) return undefined;
  if (body.usage !== undefined) return readOpenAiUsage(body.usage);
  // Responses API wraps the answer in `response` for some envelopes (e.g. a completed event).
  const response = asRecord(body.response);
  return response ? readOpenAiUsage(response.usage) : undefined;
}

/** Feeds raw stream bytes; keeps the usage of the last event that carried one. */
export interface StreamUsageScanner {
  write(chunk: Uint8Array): void;
  end(): void;
  usage(): Usage | undefined;
}

/**
 * Usage from an OpenAI-native SSE stream, read incrementally. Chat streams carry it in the last
 * chunk (`choices: []`) when `include_usage` is set; the Responses API in `response.completed`.
 * Only events whose text mentions a non-null usage are parsed, so the cost stays near a byte scan.
 */
export class OpenAiSseUsageScanner implements StreamUsageScanner {
  private readonly parser = new SseParser();
  private last: Usage | undefined;

  write(chunk: Uint8Array): void {
    for (const event of this.parser.feed(chunk)) this.inspect(event.data);
  }

  end(): void {
    for (const event of this.parser.end()) this.inspect(event.data);
  }

  usage(): Usage | undefined {
    return this.last;
  }

  private inspect(data: string): void {
    const at = data.lastIndexOf('"usage"');
    if (at === -1) return;
    let i = at + 7;
    while (i < data.length && (data[i] === ' ' || data[i] === ':' || data[i] === '\n' || data[i] === '\t'))
      i++;
    if (data[i] !== '{') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    const usage = extractOpenAiUsage(parsed);
    if (usage) this.last = usage;
  }
}

export function createOpenAiSseUsageScanner(): OpenAiSseUsageScanner {
  return new OpenAiSseUsageScanner();
}
