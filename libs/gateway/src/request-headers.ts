import { IncomingHttpHeaders } from 'node:http';
import { GatewayErrors } from './gateway.errors';

export interface TraceHeaders {
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  metadata: Record<string, string> | null;
  strictOpenAiCompliance: boolean;
}

const MAX_METADATA_BYTES = 8 * 1024;

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? null : first.slice(0, 256);
}

/** `x-gateway-metadata`: a JSON object; values are kept as strings, as analytics group by them. */
export function parseMetadata(raw: string | undefined): Record<string, string> | null {
  if (raw === undefined || raw === '') return null;
  if (raw.length > MAX_METADATA_BYTES) throw GatewayErrors.malformedMetadata();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw GatewayErrors.malformedMetadata();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw GatewayErrors.malformedMetadata();
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (value === null || typeof value === 'object') throw GatewayErrors.malformedMetadata();
    result[key] = String(value);
  }
  return result;
}

export function readTraceHeaders(headers: IncomingHttpHeaders): TraceHeaders {
  const metadataHeader = headers['x-gateway-metadata'];
  const strict = header(headers, 'x-gateway-strict-openai-compliance');
  return {
    spanId: header(headers, 'x-gateway-span-id'),
    parentSpanId: header(headers, 'x-gateway-parent-span-id'),
    spanName: header(headers, 'x-gateway-span-name'),
    metadata: parseMetadata(Array.isArray(metadataHeader) ? metadataHeader[0] : metadataHeader),
    strictOpenAiCompliance: strict === null ? true : strict.toLowerCase() !== 'false',
  };
}
