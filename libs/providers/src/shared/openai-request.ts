import { asArray, asNumber, asRecord, asString, JsonObject } from './json';

/** Reading helpers for OpenAI chat request bodies, shared by the translating adapters. */

export interface DataUrl {
  mediaType: string;
  /** Base64 payload, not decoded: providers want it base64 too. */
  data: string;
}

/** Splits `data:<media type>;base64,<payload>`; other data URLs are not images a provider accepts. */
export function parseDataUrl(url: string): DataUrl | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(';base64')) return undefined;
  return { mediaType: meta.slice(0, -7) || 'application/octet-stream', data: url.slice(comma + 1) };
}

/** Text of a message `content` (a string or an array of parts); non-text parts are skipped. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  const parts = asArray(content);
  if (!parts) return '';
  let text = '';
  for (const part of parts) {
    const record = asRecord(part);
    if (
      record &&
      (record.type === 'text' || record.type === 'input_text') &&
      typeof record.text === 'string'
    ) {
      text += text.length > 0 ? `\n${record.text}` : record.text;
    }
  }
  return text;
}

/** `stop` as a list (OpenAI accepts a string or up to 4 strings). */
export function stopSequences(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  const list = asArray(stop)?.filter((item): item is string => typeof item === 'string');
  return list && list.length > 0 ? list : undefined;
}

/** `max_completion_tokens` replaced `max_tokens`; either may come. */
export function maxOutputTokens(body: JsonObject): number | undefined {
  return asNumber(body.max_completion_tokens) ?? asNumber(body.max_tokens);
}

export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: JsonObject;
  strict?: boolean;
}

/** Function tools of a request, from `tools` or the deprecated `functions`. */
export function functionTools(body: JsonObject): FunctionTool[] {
  const out: FunctionTool[] = [];
  const tools = asArray(body.tools);
  if (tools) {
    for (const tool of tools) {
      const record = asRecord(tool);
      const fn = record && record.type === 'function' ? asRecord(record.function) : undefined;
      const name = fn ? asString(fn.name) : undefined;
      if (!fn || !name) continue;
      out.push(toFunctionTool(name, fn));
    }
    return out;
  }
  for (const fn of asArray(body.functions) ?? []) {
    const record = asRecord(fn);
    const name = record ? asString(record.name) : undefined;
    if (record && name) out.push(toFunctionTool(name, record));
  }
  return out;
}

function toFunctionTool(name: string, fn: JsonObject): FunctionTool {
  const tool: FunctionTool = { name };
  const description = asString(fn.description);
  if (description !== undefined) tool.description = description;
  const parameters = asRecord(fn.parameters);
  if (parameters) tool.parameters = parameters;
  if (typeof fn.strict === 'boolean') tool.strict = fn.strict;
  return tool;
}

export type ToolChoice =
  { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'function'; name: string };

/** `tool_choice` (or the deprecated `function_call`) normalized; undefined when not given. */
export function readToolChoice(body: JsonObject): ToolChoice | undefined {
  const choice = body.tool_choice ?? body.function_call;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { type: choice };
  const record = asRecord(choice);
  if (!record) return undefined;
  const name = asString(asRecord(record.function)?.name) ?? asString(record.name);
  return name ? { type: 'function', name } : undefined;
}
