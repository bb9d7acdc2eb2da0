import {
  asArray,
  asNumber,
  asRecord,
  asString,
  isRecord,
  tryParseJson,
  type JsonObject,
} from '../shared/json';
import {
  contentText,
  functionTools,
  maxOutputTokens,
  parseDataUrl,
  readToolChoice,
  stopSequences,
} from '../shared/openai-request';
import { ProviderRequestError } from '../shared/errors';

/** Translation of an OpenAI chat.completions body into a Bedrock Converse request body. */

type ContentBlock = JsonObject;

interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const DOCUMENT_FORMATS: Readonly<Record<string, string>> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

function imageBlock(url: string, field: string): ContentBlock {
  const data = parseDataUrl(url);
  // Converse takes image bytes or an S3 location, never an arbitrary URL it would have to fetch.
  if (!data)
    throw new ProviderRequestError(`${field}: Bedrock accepts images as base64 data URLs only`, field);
  const format = IMAGE_FORMATS[data.mediaType.toLowerCase()];
  if (!format)
    throw new ProviderRequestError(
      `${field}: image type '${data.mediaType}' is not supported by Bedrock`,
      field,
    );
  return { image: { format, source: { bytes: data.data } } };
}

function documentBlock(file: JsonObject, index: number, field: string): ContentBlock {
  const data = parseDataUrl(asString(file.file_data) ?? '');
  if (!data)
    throw new ProviderRequestError(`${field}: Bedrock accepts files as base64 data URLs only`, field);
  const format = DOCUMENT_FORMATS[data.mediaType.toLowerCase()];
  if (!format)
    throw new ProviderRequestError(
      `${field}: document type '${data.mediaType}' is not supported by Bedrock`,
      field,
    );
  // Bedrock restricts document names to a small character set and requires one per document.
  const rawName = asString(file.filename) ?? `document-${index + 1}`;
  const name =
    rawName.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9 \-()[\]]/g, '-') || `document-${index + 1}`;
  return { document: { format, name, source: { bytes: data.data } } };
}

function contentBlocks(content: unknown, field: string): ContentBlock[] {
  if (typeof content === 'string') return content.length > 0 ? [{ text: content }] : [];
  if (content === null || content === undefined) return [];
  const items = asArray(content);
  if (!items) throw new ProviderRequestError(`${field} must be a string or an array of content parts`, field);
  const blocks: ContentBlock[] = [];
  items.forEach((item, index) => {
    const part = asRecord(item);
    const type = part ? asString(part.type) : undefined;
    const partField = `${field}[${index}]`;
    if (!part || !type)
      throw new ProviderRequestError(`${partField} must be a content part with a type`, field);
    switch (type) {
      case 'text':
      case 'input_text': {
        const text = asString(part.text) ?? '';
        if (text.length > 0) blocks.push({ text });
        break;
      }
      case 'image_url': {
        const url =
          typeof part.image_url === 'string' ? part.image_url : asString(asRecord(part.image_url)?.url);
        if (!url) throw new ProviderRequestError(`${partField}.image_url.url is required`, field);
        blocks.push(imageBlock(url, partField));
        break;
      }
      case 'file': {
        const file = asRecord(part.file);
        if (!file) throw new ProviderRequestError(`${partField}.file is required`, field);
        blocks.push(documentBlock(file, index, partField));
        break;
      }
      default:
        throw new ProviderRequestError(
          `${partField}: content part type '${type}' is not supported by Bedrock`,
          field,
        );
    }
  });
  return blocks;
}

function toolInput(raw: unknown): JsonObject {
  if (isRecord(raw)) return raw;
  if (typeof raw !== 'string' || raw.trim() === '') return {};
  const parsed = tryParseJson(raw);
  return isRecord(parsed) ? parsed : { value: parsed ?? raw };
}

function toolResultContent(content: unknown): ContentBlock[] {
  const text = contentText(content);
  const parsed = tryParseJson(text);
  // Structured results go as `json` so the model sees fields rather than an escaped string.
  if (isRecord(parsed)) return [{ json: parsed }];
  return [{ text: text.length > 0 ? text : ' ' }];
}

/** Converse rejects two turns in a row from one role, so parallel tool results share a user turn. */
function push(messages: ConverseMessage[], message: ConverseMessage): void {
  if (message.content.length === 0) return;
  const last = messages[messages.length - 1];
  if (last && last.role === message.role) last.content.push(...message.content);
  else messages.push(message);
}

export interface TranslatedConversation {
  system: ContentBlock[];
  messages: ConverseMessage[];
  usesTools: boolean;
}

export function translateConversation(input: unknown): TranslatedConversation {
  const list = asArray(input);
  if (!list || list.length === 0)
    throw new ProviderRequestError('messages must be a non-empty array', 'messages');
  const system: ContentBlock[] = [];
  const messages: ConverseMessage[] = [];
  let usesTools = false;
  list.forEach((item, index) => {
    const field = `messages[${index}]`;
    const message = asRecord(item);
    const role = message ? asString(message.role) : undefined;
    if (!message || !role) throw new ProviderRequestError(`${field}.role is required`, 'messages');
    switch (role) {
      case 'system':
      case 'developer': {
        const text = contentText(message.content);
        if (text.length > 0) system.push({ text });
        break;
      }
      case 'user':
        push(messages, { role: 'user', content: contentBlocks(message.content, `${field}.content`) });
        break;
      case 'assistant': {
        // Bedrock rejects blank text blocks, which clients send beside tool calls.
        const content = contentBlocks(message.content, `${field}.content`).filter(
          (block) => typeof block.text !== 'string' || block.text.trim().length > 0,
        );
        for (const call of asArray(message.tool_calls) ?? []) {
          const toolCall = asRecord(call);
          const fn = asRecord(toolCall?.function);
          const name = asString(fn?.name);
          const id = asString(toolCall?.id);
          if (!name || !id)
            throw new ProviderRequestError(
              `${field}.tool_calls[] needs an id and a function name`,
              'messages',
            );
          content.push({ toolUse: { toolUseId: id, name, input: toolInput(fn?.arguments) } });
          usesTools = true;
        }
        push(messages, { role: 'assistant', content });
        break;
      }
      case 'tool': {
        const id = asString(message.tool_call_id);
        if (!id) throw new ProviderRequestError(`${field}.tool_call_id is required`, 'messages');
        push(messages, {
          role: 'user',
          content: [{ toolResult: { toolUseId: id, content: toolResultContent(message.content) } }],
        });
        usesTools = true;
        break;
      }
      default:
        throw new ProviderRequestError(`${field}.role '${role}' is not supported by Bedrock`, 'messages');
    }
  });
  return { system, messages, usesTools };
}

function toolConfig(body: JsonObject, usesTools: boolean): JsonObject | undefined {
  const tools = functionTools(body);
  if (tools.length === 0) return undefined;
  const choice = readToolChoice(body);
  // `none` has no Converse equivalent, so the tools are withheld instead. A conversation that
  // already holds tool calls still needs them declared, or Bedrock rejects it.
  if (choice?.type === 'none' && !usesTools) return undefined;
  const config: JsonObject = {
    tools: tools.map((tool) => {
      const spec: JsonObject = { name: tool.name };
      if (tool.description) spec.description = tool.description;
      spec.inputSchema = { json: tool.parameters ?? { type: 'object', properties: {} } };
      return { toolSpec: spec };
    }),
  };
  if (choice?.type === 'auto') config.toolChoice = { auto: {} };
  else if (choice?.type === 'required') config.toolChoice = { any: {} };
  else if (choice?.type === 'function') config.toolChoice = { tool: { name: choice.name } };
  return config;
}

function inferenceConfig(body: JsonObject): JsonObject | undefined {
  const config: JsonObject = {};
  const maxTokens = maxOutputTokens(body);
  if (maxTokens !== undefined) config.maxTokens = maxTokens;
  const temperature = asNumber(body.temperature);
  if (temperature !== undefined) config.temperature = temperature;
  const topP = asNumber(body.top_p);
  if (topP !== undefined) config.topP = topP;
  const stop = stopSequences(body.stop);
  if (stop) config.stopSequences = stop;
  return Object.keys(config).length > 0 ? config : undefined;
}

/** Fields Converse has no slot for, passed through to the model's native request. */
function additionalFields(body: JsonObject, strict: boolean): JsonObject | undefined {
  const fields: JsonObject = { ...(asRecord(body.additionalModelRequestFields) ?? {}) };
  if (!strict) {
    const topK = asNumber(body.top_k);
    if (topK !== undefined) fields.top_k = topK;
    const thinking = asRecord(body.thinking);
    if (thinking) fields.thinking = thinking;
  }
  return Object.keys(fields).length > 0 ? fields : undefined;
}

export function buildConverseBody(body: JsonObject, strict: boolean): JsonObject {
  const { system, messages, usesTools } = translateConversation(body.messages);
  const request: JsonObject = { messages };
  if (system.length > 0) request.system = system;
  const inference = inferenceConfig(body);
  if (inference) request.inferenceConfig = inference;
  const tools = toolConfig(body, usesTools);
  if (tools) request.toolConfig = tools;
  const additional = additionalFields(body, strict);
  if (additional) request.additionalModelRequestFields = additional;
  const guardrail = asRecord(body.guardrailConfig);
  if (guardrail) request.guardrailConfig = guardrail;
  return request;
}
