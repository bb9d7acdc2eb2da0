import { ProviderRequestError } from '../shared/errors';
import { asArray, asNumber, asRecord, asString, JsonObject, tryParseJson } from '../shared/json';
import {
  functionTools,
  maxOutputTokens,
  parseDataUrl,
  readToolChoice,
  stopSequences,
} from '../shared/openai-request';

/** Anthropic requires `max_tokens`; OpenAI callers usually omit it. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicRequestOptions {
  /**
   * Whether `model` goes into the body. The Messages API wants it; Claude on Vertex AI and
   * Bedrock name the model in the URL instead.
   */
  includeModel?: boolean;
  /** `max_tokens` when the caller gives none. */
  defaultMaxTokens?: number;
}

type Block = JsonObject;

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

function withCacheControl(block: Block, part: JsonObject): Block {
  if (part.cache_control !== undefined) block.cache_control = part.cache_control;
  return block;
}

/** An OpenAI `image_url` as an Anthropic image source: base64 for data URLs, else a URL source. */
function imageBlock(part: JsonObject): Block {
  const imageUrl = asRecord(part.image_url);
  const url = imageUrl ? asString(imageUrl.url) : asString(part.image_url);
  if (!url) throw new ProviderRequestError('An image_url content part has no url', 'messages');
  const data = parseDataUrl(url);
  const source = data
    ? { type: 'base64', media_type: data.mediaType, data: data.data }
    : { type: 'url', url };
  return withCacheControl({ type: 'image', source }, part);
}

/** An OpenAI `file` part (base64 data URL) as an Anthropic document block; PDFs and plain text. */
function documentBlock(part: JsonObject): Block {
  const file = asRecord(part.file) ?? {};
  const fileData = asString(file.file_data);
  const data = fileData ? parseDataUrl(fileData) : undefined;
  if (!data) {
    throw new ProviderRequestError(
      'Anthropic accepts file parts only as base64 data URLs (file_data)',
      'messages',
    );
  }
  const block: Block = {
    type: 'document',
    source: { type: 'base64', media_type: data.mediaType, data: data.data },
  };
  const filename = asString(file.filename);
  if (filename) block.title = filename;
  return withCacheControl(block, part);
}

function userContent(content: unknown): string | Block[] {
  if (typeof content === 'string') return content;
  const blocks: Block[] = [];
  for (const item of asArray(content) ?? []) {
    const part = asRecord(item);
    if (!part) continue;
    switch (part.type) {
      case 'text':
        blocks.push(withCacheControl({ type: 'text', text: asString(part.text) ?? '' }, part));
        break;
      case 'image_url':
        blocks.push(imageBlock(part));
        break;
      case 'file':
        blocks.push(documentBlock(part));
        break;
      default:
        throw new ProviderRequestError(
          `Anthropic does not accept ${String(part.type)} content parts`,
          'messages',
        );
    }
  }
  return blocks;
}

function parseArguments(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return {};
  const parsed = tryParseJson(value);
  // Anthropic wants an object; a model that produced invalid JSON still gets its text back.
  return asRecord(parsed) ?? { arguments: value };
}

/** Thinking blocks a previous answer carried (`content_blocks`), which Anthropic needs back verbatim. */
function thinkingBlocks(message: JsonObject): Block[] {
  const blocks: Block[] = [];
  for (const item of asArray(message.content_blocks) ?? []) {
    const block = asRecord(item);
    if (!block) continue;
    if (block.type === 'thinking' && typeof block.thinking === 'string') {
      const out: Block = { type: 'thinking', thinking: block.thinking };
      if (typeof block.signature === 'string') out.signature = block.signature;
      blocks.push(out);
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      blocks.push({ type: 'redacted_thinking', data: block.data });
    }
  }
  return blocks;
}

function assistantContent(message: JsonObject): string | Block[] {
  const blocks = thinkingBlocks(message);
  const content = message.content;
  if (typeof content === 'string') {
    if (content.length > 0) blocks.push({ type: 'text', text: content });
  } else {
    for (const item of asArray(content) ?? []) {
      const part = asRecord(item);
      if (part && part.type === 'text' && typeof part.text === 'string' && part.text.length > 0) {
        blocks.push(withCacheControl({ type: 'text', text: part.text }, part));
      }
    }
  }
  for (const item of asArray(message.tool_calls) ?? []) {
    const call = asRecord(item);
    const fn = call ? asRecord(call.function) : undefined;
    if (!call || !fn) continue;
    blocks.push({
      type: 'tool_use',
      id: asString(call.id) ?? '',
      name: asString(fn.name) ?? '',
      input: parseArguments(fn.arguments),
    });
  }
  const legacyCall = asRecord(message.function_call);
  if (legacyCall) {
    const name = asString(legacyCall.name) ?? '';
    blocks.push({ type: 'tool_use', id: name, name, input: parseArguments(legacyCall.arguments) });
  }
  if (blocks.length === 1 && blocks[0].type === 'text' && blocks[0].cache_control === undefined) {
    return blocks[0].text as string;
  }
  return blocks;
}

function toolResultBlock(message: JsonObject): Block {
  const id = asString(message.tool_call_id) ?? asString(message.name) ?? '';
  const content = message.content;
  const block: Block = {
    type: 'tool_result',
    tool_use_id: id,
    content: typeof content === 'string' ? content : userContent(content),
  };
  return block;
}

interface SystemParts {
  blocks: Block[];
  cached: boolean;
}

function collectSystem(message: JsonObject, system: SystemParts): void {
  const content = message.content;
  if (typeof content === 'string') {
    system.blocks.push({ type: 'text', text: content });
    return;
  }
  for (const item of asArray(content) ?? []) {
    const part = asRecord(item);
    if (!part || typeof part.text !== 'string') continue;
    if (part.cache_control !== undefined) system.cached = true;
    system.blocks.push(withCacheControl({ type: 'text', text: part.text }, part));
  }
}

/** OpenAI messages as Anthropic `system` and alternating `messages`. */
export function toAnthropicMessages(messages: unknown): {
  system?: string | Block[];
  messages: AnthropicMessage[];
} {
  const system: SystemParts = { blocks: [], cached: false };
  const out: AnthropicMessage[] = [];
  // Tool results answering one assistant turn travel together in a single user turn.
  let toolResults: Block[] | undefined;

  for (const item of asArray(messages) ?? []) {
    const message = asRecord(item);
    if (!message) continue;
    const role = message.role;
    if (role === 'system' || role === 'developer') {
      collectSystem(message, system);
      continue;
    }
    if (role === 'tool' || role === 'function') {
      if (!toolResults) {
        toolResults = [];
        out.push({ role: 'user', content: toolResults });
      }
      toolResults.push(toolResultBlock(message));
      continue;
    }
    toolResults = undefined;
    if (role === 'assistant') out.push({ role: 'assistant', content: assistantContent(message) });
    else if (role === 'user') out.push({ role: 'user', content: userContent(message.content) });
    else throw new ProviderRequestError(`Unknown message role ${String(role)}`, 'messages');
  }

  const result: { system?: string | Block[]; messages: AnthropicMessage[] } = { messages: out };
  if (system.blocks.length > 0) {
    result.system = system.cached
      ? system.blocks
      : system.blocks.map((block) => block.text as string).join('\n');
  }
  return result;
}

function toolChoice(body: JsonObject, hasTools: boolean): JsonObject | undefined {
  const choice = readToolChoice(body);
  let out: JsonObject | undefined;
  if (choice?.type === 'auto') out = { type: 'auto' };
  else if (choice?.type === 'none') out = { type: 'none' };
  else if (choice?.type === 'required') out = { type: 'any' };
  else if (choice?.type === 'function') out = { type: 'tool', name: choice.name };
  if (body.parallel_tool_calls === false && hasTools && out?.type !== 'none') {
    out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  }
  return out;
}

/**
 * `response_format: json_schema` maps to Anthropic structured outputs (`output_config.format`).
 * `json_object` has no schema-free equivalent on Anthropic, so it is left to the prompt.
 */
function outputFormat(body: JsonObject): JsonObject | undefined {
  const format = asRecord(body.response_format);
  if (!format || format.type !== 'json_schema') return undefined;
  const schema = asRecord(asRecord(format.json_schema)?.schema);
  return schema ? { format: { type: 'json_schema', schema } } : undefined;
}

/** An OpenAI chat completion request as an Anthropic Messages request body. */
export function buildAnthropicMessagesBody(
  body: JsonObject,
  options: AnthropicRequestOptions = {},
): JsonObject {
  const n = asNumber(body.n);
  if (n !== undefined && n > 1)
    throw new ProviderRequestError('Anthropic returns one choice per request (n must be 1)', 'n');

  const out: JsonObject = {};
  if (options.includeModel !== false) out.model = body.model;
  const { system, messages } = toAnthropicMessages(body.messages);
  if (system !== undefined) out.system = system;
  out.messages = messages;

  const thinking = asRecord(body.thinking);
  const budget = thinking ? asNumber(thinking.budget_tokens) : undefined;
  const defaultMax = options.defaultMaxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  // With extended thinking the budget counts inside max_tokens, which must exceed it.
  out.max_tokens = maxOutputTokens(body) ?? (budget !== undefined ? budget + defaultMax : defaultMax);
  if (thinking) out.thinking = thinking;

  const stop = stopSequences(body.stop);
  if (stop) out.stop_sequences = stop;
  if (body.temperature !== undefined && body.temperature !== null) out.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) out.top_p = body.top_p;
  if (body.top_k !== undefined) out.top_k = body.top_k;
  if (body.stream === true) out.stream = true;

  const tools = functionTools(body);
  if (tools.length > 0) {
    out.tools = tools.map((tool) => {
      const anthropicTool: JsonObject = {
        name: tool.name,
        input_schema: tool.parameters ?? { type: 'object', properties: {} },
      };
      if (tool.description !== undefined) anthropicTool.description = tool.description;
      return anthropicTool;
    });
  }
  const choice = toolChoice(body, tools.length > 0);
  if (choice) out.tool_choice = choice;

  const format = outputFormat(body);
  if (format) out.output_config = format;

  const user = asString(body.user);
  if (user) out.metadata = { user_id: user };
  return out;
}
