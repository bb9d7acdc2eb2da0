import { errorTypeForStatus, readProviderError } from '../shared/errors';
import { asRecord, asString } from '../shared/json';
import type { ProviderError } from '../types';

/**
 * Bedrock errors are `{"message": "..."}` with the exception name in the `x-amzn-ErrorType` header,
 * sometimes also in the body as `__type` (`com.amazon.coral.validate#ValidationException`). The
 * exception name becomes the code; the OpenAI type follows the HTTP status.
 */
export function transformBedrockError(status: number, body: unknown): ProviderError {
  const record = asRecord(body);
  if (!record) return readProviderError(status, body);
  const message = asString(record.message) ?? asString(record.Message);
  const rawType = asString(record.__type) ?? asString(record.code);
  const code = rawType ? rawType.slice(rawType.lastIndexOf('#') + 1).split(':')[0] : null;
  if (!message) return { ...readProviderError(status, body), code: code ?? null };
  return { message, type: errorTypeForStatus(status), param: null, code };
}
