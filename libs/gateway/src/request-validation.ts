import { GatewayRoute } from '@switchboard/providers';
import { CommonErrors } from '@switchboard/common';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function fail(param: string, message: string): never {
  throw CommonErrors.validation(message, param);
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Absent and null both mean "not set" for the spec's nullable fields. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function checkRange(body: Record<string, unknown>, field: string, min: number, max: number, integer = false) {
  const value = body[field];
  if (!present(value)) return;
  if (!isNumber(value) || (integer && !Number.isInteger(value))) {
    fail(field, `${field} must be ${integer ? 'an integer' : 'a number'} between ${min} and ${max}`);
  }
  if (value < min || value > max) fail(field, `${field} must be between ${min} and ${max} (got ${value})`);
}

function checkStop(body: Record<string, unknown>) {
  const stop = body.stop;
  if (!present(stop) || typeof stop === 'string') return;
  if (!Array.isArray(stop) || stop.some((item) => typeof item !== 'string')) {
    fail('stop', 'stop must be a string or an array of strings');
  }
  if (stop.length > 4) fail('stop', `stop takes at most 4 sequences (got ${stop.length})`);
}

function checkLogitBias(body: Record<string, unknown>) {
  const bias = body.logit_bias;
  if (!present(bias)) return;
  if (typeof bias !== 'object' || Array.isArray(bias))
    fail('logit_bias', 'logit_bias must be an object of token id to bias');
  for (const [token, value] of Object.entries(bias as Record<string, unknown>)) {
    if (!isNumber(value) || value < -100 || value > 100) {
      fail(`logit_bias.${token}`, 'logit_bias values must be between -100 and 100');
    }
  }
}

function checkSeed(body: Record<string, unknown>) {
  const seed = body.seed;
  if (!present(seed)) return;
  if (!isNumber(seed) || !Number.isInteger(seed)) fail('seed', 'seed must be an integer');
  const big = BigInt(seed);
  if (big < INT64_MIN || big > INT64_MAX) fail('seed', 'seed must be within the signed 64-bit range');
}

function checkStreamOptions(body: Record<string, unknown>) {
  if (!present(body.stream_options)) return;
  if (body.stream !== true) fail('stream_options', 'stream_options is only allowed when stream is true');
  if (typeof body.stream_options !== 'object' || Array.isArray(body.stream_options)) {
    fail('stream_options', 'stream_options must be an object');
  }
}

function checkCommon(body: Record<string, unknown>) {
  if (typeof body.model !== 'string' || body.model.length === 0)
    fail('model', 'model is required and must be a string');
  if (present(body.stream) && typeof body.stream !== 'boolean') fail('stream', 'stream must be a boolean');
  checkRange(body, 'n', 1, 128, true);
  checkRange(body, 'temperature', 0, 2);
  checkRange(body, 'top_p', 0, 1);
  checkRange(body, 'frequency_penalty', -2, 2);
  checkRange(body, 'presence_penalty', -2, 2);
  checkStop(body);
  checkLogitBias(body);
  checkSeed(body);
  checkStreamOptions(body);
}

function checkChat(body: Record<string, unknown>) {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    fail('messages', 'messages must be an array with at least 1 item');
  }
  body.messages.forEach((message, index) => {
    if (
      typeof message !== 'object' ||
      message === null ||
      typeof (message as { role?: unknown }).role !== 'string'
    ) {
      fail(`messages[${index}].role`, 'every message must be an object with a role');
    }
  });
  checkCommon(body);
  if (present(body.max_tokens)) checkRange(body, 'max_tokens', 0, Number.MAX_SAFE_INTEGER, true);
  if (present(body.max_completion_tokens))
    checkRange(body, 'max_completion_tokens', 0, Number.MAX_SAFE_INTEGER, true);
  if (present(body.logprobs) && typeof body.logprobs !== 'boolean')
    fail('logprobs', 'logprobs must be a boolean');
  if (present(body.top_logprobs)) {
    checkRange(body, 'top_logprobs', 0, 20, true);
    if (body.logprobs !== true) fail('top_logprobs', 'top_logprobs requires logprobs to be true');
  }
  if (present(body.tools)) {
    if (!Array.isArray(body.tools)) fail('tools', 'tools must be an array');
    if (body.tools.length > 128)
      fail('tools', `tools takes at most 128 functions (got ${body.tools.length})`);
  }
  if (present(body.functions)) {
    if (!Array.isArray(body.functions) || body.functions.length < 1 || body.functions.length > 128) {
      fail('functions', 'functions must be an array of 1 to 128 items');
    }
  }
}

function checkCompletion(body: Record<string, unknown>) {
  if (!present(body.prompt)) fail('prompt', 'prompt is required');
  checkCommon(body);
  checkRange(body, 'max_tokens', 0, Number.MAX_SAFE_INTEGER, true);
  checkRange(body, 'logprobs', 0, 5, true);
  if (present(body.best_of)) {
    checkRange(body, 'best_of', 0, 20, true);
    const n = present(body.n) ? (body.n as number) : 1;
    if ((body.best_of as number) <= n && !(body.best_of === 1 && n === 1)) {
      fail('best_of', 'best_of must be greater than n');
    }
    if (body.stream === true && (body.best_of as number) > 1)
      fail('best_of', 'best_of results cannot be streamed');
  }
}

/**
 * The bounds the spec's chat and text completion tables give, checked in one pass over the
 * fields (no schema engine on the hot path); everything else is forwarded untouched.
 */
export function validateRequestBody(route: GatewayRoute, body: unknown): void {
  if (route !== 'chat.completions' && route !== 'completions' && route !== 'embeddings') return;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw CommonErrors.validation('The request body must be a JSON object', 'body');
  }
  const record = body as Record<string, unknown>;
  if (route === 'chat.completions') checkChat(record);
  else if (route === 'completions') checkCompletion(record);
  else {
    if (typeof record.model !== 'string' || record.model.length === 0)
      fail('model', 'model is required and must be a string');
    if (!present(record.input)) fail('input', 'input is required');
  }
}
