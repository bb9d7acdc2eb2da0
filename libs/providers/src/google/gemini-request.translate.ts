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
  maxOutputTokens,
  parseDataUrl,
  readToolChoice,
  stopSequences,
} from '../shared/openai-request';
import { ProviderRequestError } from '../shared/errors';
import { cleanSchemaForGemini } from './json-schema.clean';

/** Translation of an OpenAI chat.completions body into a Gemini `GenerateContentRequest`. */

export interface GeminiPart extends JsonObject {
  text?: string;
  thought?: boolean;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { name: string; args: JsonObject };
  functionResponse?: { name: string; response: JsonObject };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

const EXTENSION_MIME_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  mov: 'video/mov',
  webm: 'video/webm',
};

/** Budgets for Gemini 2.x `thinkingBudget`; Gemini 3 takes the effort level itself. */
const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 128,
  low: 1024,
  medium: 8192,
  high: 24576,
};

export function guessMimeType(url: string): string {
  let pathname = url;
  try {
    pathname = new URL(url).pathname;
  } catch {
    // Not a URL (e.g. a bare file id); guess from the text.
  }
  const extension = /\.([a-z0-9]+)$/i.exec(pathname)?.[1]?.toLowerCase();
  return (extension && EXTENSION_MIME_TYPES[extension]) || 'image/jpeg';
}

function mediaPart(url: string, mimeTypeHint?: string): GeminiPart {
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  return { fileData: { mimeType: mimeTypeHint ?? guessMimeType(url), fileUri: url } };
}

function contentParts(content: unknown, field: string): GeminiPart[] {
  if (typeof content === 'string') return content.length > 0 ? [{ text: content }] : [];
  if (content === null || content === undefined) return [];
  const items = asArray(content);
  if (!items) throw new ProviderRequestError(`${field} must be a string or an array of content parts`, field);
  const parts: GeminiPart[] = [];
  items.forEach((item, index) => {
    const part = asRecord(item);
    const type = part ? asString(part.type) : undefined;
    if (!part || !type)
      throw new ProviderRequestError(`${field}[${index}] must be a content part with a type`, field);
    switch (type) {
      case 'text':
      case 'input_text': {
        const text = asString(part.text) ?? '';
        if (text.length > 0) parts.push({ text });
        break;
      }
      case 'image_url': {
        const imageUrl = asRecord(part.image_url);
        const url = typeof part.image_url === 'string' ? part.image_url : asString(imageUrl?.url);
        if (!url) throw new ProviderRequestError(`${field}[${index}].image_url.url is required`, field);
        parts.push(mediaPart(url, asString(imageUrl?.mime_type)));
        break;
      }
      case 'input_audio': {
        const audio = asRecord(part.input_audio);
        const data = asString(audio?.data);
        if (!data) throw new ProviderRequestError(`${field}[${index}].input_audio.data is required`, field);
        parts.push({ inlineData: { mimeType: `audio/${asString(audio?.format) ?? 'wav'}`, data } });
        break;
      }
      case 'file': {
        const file = asRecord(part.file);
        const fileData = asString(file?.file_data);
        const fileId = asString(file?.file_id);
        const url = fileData ?? fileId;
        if (!url) throw new ProviderRequestError(`${field}[${index}].file needs file_data or file_id`, field);
        const mimeType = asString(file?.mime_type) ?? guessMimeType(asString(file?.filename) ?? url);
        parts.push(mediaPart(url, mimeType));
        break;
      }
      default:
        throw new ProviderRequestError(
          `${field}[${index}]: content part type '${type}' is not supported by Gemini`,
          field,
        );
    }
  });
  return parts;
}

function parseArguments(raw: unknown): JsonObject {
  if (isRecord(raw)) return raw;
  if (typeof raw !== 'string' || raw.trim() === '') return {};
  const parsed = tryParseJson(raw);
  // Gemini's `args` is a Struct; a non-object value is kept rather than silently dropped.
  return isRecord(parsed) ? parsed : { value: parsed ?? raw };
}

function toolResponse(content: unknown): JsonObject {
  const text = contentText(content);
  const parsed = tryParseJson(text);
  return isRecord(parsed) ? parsed : { content: text };
}

/** Appends `content`, merging it into the previous turn when the role repeats (parallel tool results). */
function push(contents: GeminiContent[], content: GeminiContent): void {
  if (content.parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last && last.role === content.role) last.parts.push(...content.parts);
  else contents.push(content);
}

export interface TranslatedMessages {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
}

export function translateMessages(messages: unknown): TranslatedMessages {
  const list = asArray(messages);
  if (!list || list.length === 0)
    throw new ProviderRequestError('messages must be a non-empty array', 'messages');
  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();

  list.forEach((item, index) => {
    const field = `messages[${index}]`;
    const message = asRecord(item);
    const role = message ? asString(message.role) : undefined;
    if (!message || !role) throw new ProviderRequestError(`${field}.role is required`, 'messages');
    switch (role) {
      case 'system':
      case 'developer': {
        const text = contentText(message.content);
        if (text.length > 0) systemParts.push({ text });
        break;
      }
      case 'user':
        push(contents, { role: 'user', parts: contentParts(message.content, `${field}.content`) });
        break;
      case 'assistant': {
        const parts = contentParts(message.content, `${field}.content`);
        for (const call of asArray(message.tool_calls) ?? []) {
          const toolCall = asRecord(call);
          const fn = asRecord(toolCall?.function);
          const name = asString(fn?.name);
          if (!toolCall || !name)
            throw new ProviderRequestError(`${field}.tool_calls[].function.name is required`, 'messages');
          const id = asString(toolCall.id);
          if (id) toolNames.set(id, name);
          parts.push({ functionCall: { name, args: parseArguments(fn?.arguments) } });
        }
        const legacyCall = asRecord(message.function_call);
        const legacyName = asString(legacyCall?.name);
        if (legacyName)
          parts.push({ functionCall: { name: legacyName, args: parseArguments(legacyCall?.arguments) } });
        push(contents, { role: 'model', parts });
        break;
      }
      case 'tool': {
        const id = asString(message.tool_call_id);
        const name = (id ? toolNames.get(id) : undefined) ?? asString(message.name);
        if (!name) {
          throw new ProviderRequestError(
            `${field}: no earlier assistant tool call has id '${id ?? ''}'; Gemini needs the function name`,
            'messages',
          );
        }
        push(contents, {
          role: 'user',
          parts: [{ functionResponse: { name, response: toolResponse(message.content) } }],
        });
        break;
      }
      case 'function': {
        const name = asString(message.name);
        if (!name)
          throw new ProviderRequestError(`${field}.name is required for function messages`, 'messages');
        push(contents, {
          role: 'user',
          parts: [{ functionResponse: { name, response: toolResponse(message.content) } }],
        });
        break;
      }
      default:
        throw new ProviderRequestError(`${field}.role '${role}' is not supported`, 'messages');
    }
  });

  const translated: TranslatedMessages = { contents };
  if (systemParts.length > 0) translated.systemInstruction = { parts: systemParts };
  return translated;
}

export function translateTools(tools: unknown): JsonObject[] | undefined {
  const list = asArray(tools);
  if (!list || list.length === 0) return undefined;
  const declarations: JsonObject[] = [];
  const native: JsonObject[] = [];
  list.forEach((item, index) => {
    const tool = asRecord(item);
    if (!tool) throw new ProviderRequestError(`tools[${index}] must be an object`, 'tools');
    if (tool.type === 'function') {
      const fn = asRecord(tool.function);
      const name = asString(fn?.name);
      if (!fn || !name) throw new ProviderRequestError(`tools[${index}].function.name is required`, 'tools');
      const declaration: JsonObject = { name };
      const description = asString(fn.description);
      if (description) declaration.description = description;
      // A function without parameters must omit the field: Gemini rejects an empty OBJECT schema.
      const parameters = asRecord(fn.parameters);
      if (parameters && Object.keys(asRecord(parameters.properties) ?? {}).length > 0) {
        declaration.parameters = cleanSchemaForGemini(parameters);
      }
      declarations.push(declaration);
      return;
    }
    // Gemini-native tools (`googleSearch`, `codeExecution`, `urlContext`) are forwarded as written.
    const { type: _type, ...rest } = tool;
    if (Object.keys(rest).length === 0)
      throw new ProviderRequestError(`tools[${index}]: unsupported tool type`, 'tools');
    native.push(rest);
  });
  const result: JsonObject[] = [];
  if (declarations.length > 0) result.push({ functionDeclarations: declarations });
  return [...result, ...native];
}

export function translateToolChoice(body: JsonObject): JsonObject | undefined {
  const choice = readToolChoice(body);
  if (!choice) return undefined;
  switch (choice.type) {
    case 'auto':
      return { functionCallingConfig: { mode: 'AUTO' } };
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'required':
      return { functionCallingConfig: { mode: 'ANY' } };
    case 'function':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  }
}

function thinkingConfig(body: JsonObject, model: string, strict: boolean): JsonObject | undefined {
  const config: JsonObject = {};
  const effort = asString(body.reasoning_effort);
  const thinking = asRecord(body.thinking);
  if (effort) {
    // Gemini 3 replaced the token budget with a level and rejects requests that send both.
    if (/gemini-3/.test(model)) config.thinkingLevel = effort === 'none' ? 'minimal' : effort;
    else if (effort in THINKING_BUDGETS) config.thinkingBudget = THINKING_BUDGETS[effort];
    else throw new ProviderRequestError(`reasoning_effort '${effort}' is not supported`, 'reasoning_effort');
  } else if (thinking) {
    if (thinking.type === 'disabled') config.thinkingBudget = 0;
    else {
      const budget = asNumber(thinking.budget_tokens);
      config.thinkingBudget = budget ?? -1;
    }
  } else {
    return undefined;
  }
  // Thought summaries are only useful when they can be returned to the caller.
  if (!strict && config.thinkingBudget !== 0) config.includeThoughts = true;
  return config;
}

function generationConfig(body: JsonObject, model: string, strict: boolean): JsonObject {
  const config: JsonObject = {};
  const stop = stopSequences(body.stop);
  if (stop) config.stopSequences = stop;
  const maxTokens = maxOutputTokens(body);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const numeric: Array<[string, string]> = [
    ['temperature', 'temperature'],
    ['top_p', 'topP'],
    ['top_k', 'topK'],
    ['n', 'candidateCount'],
    ['seed', 'seed'],
    ['presence_penalty', 'presencePenalty'],
    ['frequency_penalty', 'frequencyPenalty'],
  ];
  for (const [from, to] of numeric) {
    const value = asNumber(body[from]);
    if (value !== undefined) config[to] = value;
  }
  if (body.logprobs === true) {
    config.responseLogprobs = true;
    const top = asNumber(body.top_logprobs);
    if (top !== undefined) config.logprobs = top;
  }
  const format = asRecord(body.response_format);
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = asRecord(format.json_schema)?.schema;
    if (schema !== undefined) config.responseSchema = cleanSchemaForGemini(schema);
  }
  const thinking = thinkingConfig(body, model, strict);
  if (thinking) config.thinkingConfig = thinking;
  return config;
}

/** Builds the `generateContent` body (the model travels in the URL). */
export function buildGenerateContentBody(body: JsonObject, strict: boolean): JsonObject {
  const model = asString(body.model) ?? '';
  const { contents, systemInstruction } = translateMessages(body.messages);
  const request: JsonObject = { contents };
  if (systemInstruction) request.systemInstruction = systemInstruction;
  const tools = translateTools(body.tools);
  if (tools && tools.length > 0) request.tools = tools;
  const toolConfig = translateToolChoice(body);
  if (toolConfig && request.tools) request.toolConfig = toolConfig;
  const config = generationConfig(body, model, strict);
  if (Object.keys(config).length > 0) request.generationConfig = config;
  // Provider-specific fields some clients send on purpose.
  const safetySettings = body.safety_settings ?? body.safetySettings;
  if (Array.isArray(safetySettings)) request.safetySettings = safetySettings;
  const cachedContent = asString(body.cached_content) ?? asString(body.cachedContent);
  if (cachedContent) request.cachedContent = cachedContent;
  return request;
}
