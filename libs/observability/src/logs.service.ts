import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Brackets, DataSource, SelectQueryBuilder } from 'typeorm';
import {
  CommonErrors,
  Principal,
  firstValidationProblem,
  listEnvelope,
  timeOrderedId,
  toPage,
} from '@switchboard/common';
import { SecuritySettingsService } from '@switchboard/identity';
import { CustomLogDto, InsertLogsResult, ListLogsQueryDto } from './dto/log.dto';
import { RequestLogEntity } from './entities/request-log.entity';
import type { LogRecord } from './log-record';
import { LogWriter } from './log-writer';
import { toLogView } from './logs.mapper';
import { ObservabilityErrors } from './observability.errors';

const MAX_CUSTOM_LOGS = 1_000;
/** Custom bodies are stored like gateway bodies: capped, so one request cannot bloat the table. */
const MAX_CUSTOM_BODY_CHARS = 256 * 1024;
const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** Which rows a principal may read: tenant, workspace, and possibly only its own keys' traffic. */
interface Visibility {
  organisationId: string;
  workspaceId: string | null;
  userId: string | null;
  apiKeyId: string | null;
}

export interface CustomLogContext {
  requestId: string;
  traceId: string;
}

function capped(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > MAX_CUSTOM_BODY_CHARS ? text.slice(0, MAX_CUSTOM_BODY_CHARS) : text;
}

function usageOf(body: Record<string, unknown>): { prompt: number; completion: number; total: number } {
  const usage = body.usage as Record<string, unknown> | undefined;
  const read = (...keys: string[]) => {
    for (const key of keys) if (typeof usage?.[key] === 'number') return Math.max(0, usage[key] as number);
    return 0;
  };
  const prompt = read('prompt_tokens', 'input_tokens');
  const completion = read('completion_tokens', 'output_tokens');
  return { prompt, completion, total: read('total_tokens') || prompt + completion };
}

@Injectable()
export class LogsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly writer: LogWriter,
    private readonly securitySettings: SecuritySettingsService,
  ) {}

  async get(principal: Principal, logId: string) {
    const visibility = await this.visibility(principal);
    await this.writer.flush();
    const query = this.scoped(visibility).andWhere('log.id = :logId', { logId });
    // A non-uuid id cannot exist, and PostgreSQL would refuse to compare it with a uuid column.
    const row = /^[0-9a-f-]{36}$/i.test(logId) ? await query.getOne() : null;
    if (!row) throw ObservabilityErrors.logNotFound(logId);
    return toLogView(row, true);
  }

  async list(principal: Principal, query: ListLogsQueryDto) {
    const visibility = await this.visibility(principal);
    const { skip, take } = toPage(query);
    const end = query.end_time ? new Date(query.end_time) : new Date();
    const start = query.start_time ? new Date(query.start_time) : new Date(end.getTime() - DEFAULT_WINDOW_MS);
    await this.writer.flush();
    const builder = this.scoped(visibility)
      .andWhere('log.created_at >= :start AND log.created_at <= :end', this.dates({ start, end }))
      .orderBy('log.created_at', 'DESC')
      .addOrderBy('log.id', 'DESC')
      .skip(skip)
      .take(take);
    if (query.workspace_id)
      builder.andWhere('log.workspace_id = :filterWorkspace', { filterWorkspace: query.workspace_id });
    if (query.api_key_id) builder.andWhere('log.api_key_id = :filterKey', { filterKey: query.api_key_id });
    if (query.provider) builder.andWhere('log.provider = :provider', { provider: query.provider });
    if (query.model) builder.andWhere('log.model = :model', { model: query.model });
    if (query.trace_id) builder.andWhere('log.trace_id = :traceId', { traceId: query.trace_id });
    if (query.status_code) {
      builder.andWhere('log.status IN (:...statuses)', {
        statuses: query.status_code.split(',').map(Number),
      });
    }
    if (query.metadata) this.whereMetadata(builder, JSON.parse(query.metadata) as Record<string, string>);
    const [rows, total] = await builder.getManyAndCount();
    return listEnvelope(
      rows.map((row) => toLogView(row, false)),
      total,
    );
  }

  /**
   * Custom logs (POST /logs) take the same path as gateway logs, then wait for the write, so a
   * 200 means the log can be read back (or, with the database down, that it is safe on disk).
   */
  async insertCustom(
    principal: Principal,
    context: CustomLogContext,
    body: unknown,
  ): Promise<InsertLogsResult> {
    const items = Array.isArray(body) ? body : [body];
    if (items.length === 0) throw ObservabilityErrors.emptyLogs();
    if (items.length > MAX_CUSTOM_LOGS) throw ObservabilityErrors.tooManyLogs(MAX_CUSTOM_LOGS);
    const logs = items.map((item, index) =>
      this.validateCustom(item, Array.isArray(body) ? `[${index}]` : ''),
    );
    const now = new Date();
    const records = logs.map((log) => this.customRecord(principal, context, log, now));
    for (const record of records) this.writer.enqueue(record);
    await this.writer.flush();
    return { status: 'success', log_ids: records.map((record) => record.id) };
  }

  private validateCustom(item: unknown, prefix: string): CustomLogDto {
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      throw CommonErrors.validation('Each log must be an object with request and response', prefix || null);
    }
    const log = plainToInstance(CustomLogDto, item);
    const errors = validateSync(log, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true });
    const problem = firstValidationProblem(errors);
    if (problem) {
      const param = prefix ? `${prefix}.${problem.param}` : problem.param;
      throw CommonErrors.validation(problem.message.replace(problem.param, param), param);
    }
    return log;
  }

  private customRecord(
    principal: Principal,
    context: CustomLogContext,
    log: CustomLogDto,
    now: Date,
  ): LogRecord {
    const { trace_id: traceId, span_id: spanId, span_name: spanName, ...metadata } = log.metadata ?? {};
    const usage = usageOf(log.response.body);
    const model = log.request.body.model;
    const status = log.response.status ?? 200;
    return {
      id: timeOrderedId(),
      requestId: context.requestId,
      traceId: traceId ?? context.traceId,
      spanId: spanId ?? null,
      parentSpanId: null,
      spanName: spanName ?? null,
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId,
      apiKeyId: principal.apiKey?.id ?? null,
      userId: principal.user?.id ?? null,
      provider: null,
      providerSlug: null,
      model: typeof model === 'string' ? model : null,
      configId: null,
      promptId: null,
      route: 'custom',
      method: log.request.method ?? 'POST',
      path: log.request.url,
      status,
      isStream: false,
      latencyMs: log.response.response_time ?? 0,
      ttfbMs: null,
      promptTokens: usage.prompt,
      completionTokens: usage.completion,
      totalTokens: usage.total,
      cachedTokens: 0,
      reasoningTokens: 0,
      cost: null,
      cacheStatus: 'disabled',
      retryCount: 0,
      metadata: Object.keys(metadata).length > 0 ? metadata : null,
      requestBody: capped(log.request.body),
      responseBody: capped(log.response.body),
      errorCode: null,
      errorMessage: status >= 400 ? capped(log.response.body).slice(0, 1024) : null,
      createdAt: now,
    };
  }

  /**
   * Workspace keys see their workspace only. Workspace members and managers see only their own
   * keys' traffic when the security settings turn membersViewAllData / managersViewAllData off;
   * workspace admins and organisation-wide principals always see everything in reach.
   */
  private async visibility(principal: Principal): Promise<Visibility> {
    const visibility: Visibility = {
      organisationId: principal.organisationId,
      workspaceId: principal.organisationWide ? null : principal.workspaceId,
      userId: null,
      apiKeyId: null,
    };
    const role = principal.workspaceRole;
    if (!principal.organisationWide && (role === 'member' || role === 'manager')) {
      const settings = await this.securitySettings.effective(principal.organisationId, principal.workspaceId);
      const viewAll = role === 'member' ? settings.membersViewAllData : settings.managersViewAllData;
      if (!viewAll) {
        if (principal.user) visibility.userId = principal.user.id;
        else visibility.apiKeyId = principal.apiKey?.id ?? null;
      }
    }
    return visibility;
  }

  private scoped(visibility: Visibility): SelectQueryBuilder<RequestLogEntity> {
    const builder = this.dataSource
      .getRepository(RequestLogEntity)
      .createQueryBuilder('log')
      .where('log.organisation_id = :organisationId', { organisationId: visibility.organisationId });
    if (visibility.workspaceId) {
      builder.andWhere('log.workspace_id = :workspaceId', { workspaceId: visibility.workspaceId });
    }
    if (visibility.userId) builder.andWhere('log.user_id = :ownUser', { ownUser: visibility.userId });
    else if (visibility.apiKeyId)
      builder.andWhere('log.api_key_id = :ownKey', { ownKey: visibility.apiKeyId });
    return builder;
  }

  /** Dates compared as the driver stores them (SQLite keeps UTC text). */
  private dates(values: Record<string, Date>): Record<string, unknown> {
    const column = this.dataSource.getMetadata(RequestLogEntity).findColumnWithPropertyName('created_at');
    const result: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values)) {
      result[name] = column ? this.dataSource.driver.preparePersistentValue(value, column) : value;
    }
    return result;
  }

  private whereMetadata(builder: SelectQueryBuilder<RequestLogEntity>, filter: Record<string, string>): void {
    const postgres = this.dataSource.options.type === 'postgres';
    builder.andWhere(
      new Brackets((inner) => {
        Object.entries(filter).forEach(([key, value], index) => {
          const keyParam = `metaKey${index}`;
          const valueParam = `metaValue${index}`;
          // Keys are validated to [A-Za-z0-9_.:-], so the quoted JSON path cannot be broken out of.
          const expression = postgres
            ? `log.metadata ->> :${keyParam} = :${valueParam}`
            : `json_extract(log.metadata, :${keyParam}) = :${valueParam}`;
          inner.andWhere(expression, {
            [keyParam]: postgres ? key : `$."${key}"`,
            [valueParam]: value,
          });
        });
      }),
    );
  }
}
