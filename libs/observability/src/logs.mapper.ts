import type { LogView } from './dto/log.dto';
import type { RequestLogEntity } from './entities/request-log.entity';

/** Bodies are stored as text (size-capped by the gateway); answer JSON when they are JSON. */
function parseBody(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toNumber(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/** A stored log in the reference's `LogObject` shape. Bodies only in the detail view. */
export function toLogView(row: RequestLogEntity, withBodies: boolean): LogView {
  const createdAt = row.created_at.toISOString();
  const view: LogView = {
    object: 'log',
    id: row.id,
    _id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    created_at: createdAt,
    request: { url: row.path, method: row.method },
    response: { status: row.status, responseTime: row.latency_ms },
    metrics: {
      id: row.id,
      organisation_id: row.organisation_id,
      workspace_id: row.workspace_id,
      api_key_id: row.api_key_id,
      user_id: row.user_id,
      request_id: row.request_id,
      trace_id: row.trace_id,
      span_id: row.span_id,
      parent_span_id: row.parent_span_id,
      span_name: row.span_name,
      config_id: row.config_id,
      prompt_id: row.prompt_id,
      created_at: createdAt,
      is_success: row.status >= 200 && row.status < 300,
      ai_org: row.provider,
      ai_model: row.model,
      virtual_key: row.provider_slug,
      route: row.route,
      request_url: row.path,
      request_method: row.method,
      response_status_code: row.status,
      response_time: row.latency_ms,
      time_to_first_byte: row.ttfb_ms,
      req_units: row.prompt_tokens,
      res_units: row.completion_tokens,
      total_units: row.total_tokens,
      cached_units: row.cached_tokens,
      reasoning_units: row.reasoning_tokens,
      cost: toNumber(row.cost),
      cost_currency: 'USD',
      cache_status: row.cache_status,
      stream_mode: row.is_stream ? 1 : 0,
      retry_count: row.retry_count,
      error_code: row.error_code,
      error_message: row.error_message,
      metadata: row.metadata ?? {},
    },
  };
  if (withBodies) {
    const requestBody = parseBody(row.request_body);
    const responseBody = parseBody(row.response_body);
    if (requestBody !== undefined) view.request.body = requestBody;
    if (responseBody !== undefined) view.response.body = responseBody;
  }
  return view;
}
