import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { LogRecord } from './log-record';
import { LATENCY_BUCKET_COLUMNS } from './latency-histogram';
import { RollupDelta, aggregateRollups } from './rollup-aggregation';
import { RequestLogEntity } from './entities/request-log.entity';
import { RequestLogRollupEntity } from './entities/request-log-rollup.entity';

/** Strings longer than their column would fail the whole batch on PostgreSQL; cut them instead. */
function cut(value: string | null, length: number): string | null {
  return value !== null && value.length > length ? value.slice(0, length) : value;
}

function integer(value: number): number {
  return Number.isFinite(value) ? Math.max(0, Math.round(value)) : 0;
}

/** A LogRecord as the row it becomes. Integers are rounded: PostgreSQL refuses `12.5` for an integer. */
export function toRow(record: LogRecord): RequestLogEntity {
  return {
    id: record.id,
    request_id: cut(record.requestId, 128) ?? '',
    trace_id: cut(record.traceId, 128) ?? '',
    span_id: cut(record.spanId, 128),
    parent_span_id: cut(record.parentSpanId, 128),
    span_name: cut(record.spanName, 255),
    organisation_id: record.organisationId,
    workspace_id: record.workspaceId,
    api_key_id: record.apiKeyId,
    user_id: record.userId,
    provider: cut(record.provider, 64),
    provider_slug: cut(record.providerSlug, 255),
    model: cut(record.model, 255),
    config_id: cut(record.configId, 255),
    prompt_id: cut(record.promptId, 255),
    route: cut(record.route, 64) ?? '',
    method: cut(record.method, 16) ?? '',
    path: cut(record.path, 2048) ?? '',
    status: integer(record.status),
    is_stream: record.isStream,
    latency_ms: integer(record.latencyMs),
    ttfb_ms: record.ttfbMs === null ? null : integer(record.ttfbMs),
    prompt_tokens: integer(record.promptTokens),
    completion_tokens: integer(record.completionTokens),
    total_tokens: integer(record.totalTokens),
    cached_tokens: integer(record.cachedTokens),
    reasoning_tokens: integer(record.reasoningTokens),
    cost: record.cost !== null && Number.isFinite(record.cost) ? record.cost : null,
    cache_status: cut(record.cacheStatus, 16) ?? 'disabled',
    retry_count: integer(record.retryCount),
    metadata: record.metadata,
    request_body: record.requestBody,
    response_body: record.responseBody,
    error_code: cut(record.errorCode, 64),
    error_message: record.errorMessage,
    created_at: record.createdAt,
  };
}

function rollupRow(delta: RollupDelta): Record<string, unknown> {
  const row: Record<string, unknown> = {
    id: delta.id,
    bucket_start: delta.bucketStart,
    granularity: delta.granularity,
    organisation_id: delta.organisationId,
    workspace_id: delta.workspaceId,
    api_key_id: delta.apiKeyId,
    provider: cut(delta.provider, 64),
    model: cut(delta.model, 255),
    config_id: cut(delta.configId, 255),
    prompt_id: cut(delta.promptId, 255),
    status_code: delta.statusCode,
    cache_status: cut(delta.cacheStatus, 16),
    request_count: delta.requestCount,
    error_count: delta.errorCount,
    cache_hit_count: delta.cacheHitCount,
    prompt_tokens: delta.promptTokens,
    completion_tokens: delta.completionTokens,
    total_tokens: delta.totalTokens,
    cached_tokens: delta.cachedTokens,
    reasoning_tokens: delta.reasoningTokens,
    // Float sums of many small prices carry noise below the column's scale.
    cost: Number(delta.cost.toFixed(10)),
    latency_sum_ms: delta.latencySumMs,
    ttfb_count: delta.ttfbCount,
    ttfb_sum_ms: delta.ttfbSumMs,
  };
  LATENCY_BUCKET_COLUMNS.forEach((column, index) => {
    row[column] = delta.latencyBuckets[index];
  });
  return row;
}

/**
 * SQLite binds at most 32,766 parameters per statement (PostgreSQL 65,535): a batch wider than
 * that is split, still inside the one transaction. At the default batch size it is one statement.
 */
const MAX_PARAMETERS = 30_000;

function rowsPerStatement(columnCount: number): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS / columnCount));
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

/** Rollup columns that identify a row; every other column is a counter added on conflict. */
const ROLLUP_KEY_COLUMNS = new Set([
  'id',
  'bucket_start',
  'granularity',
  'organisation_id',
  'workspace_id',
  'api_key_id',
  'provider',
  'model',
  'config_id',
  'prompt_id',
  'status_code',
  'cache_status',
]);

/**
 * The log store's writes: one multi-row insert for a batch of logs and one upsert for its
 * rollups, in one transaction. Raw SQL because TypeORM's builder can express neither
 * `ON CONFLICT DO NOTHING RETURNING` portably nor additive `DO UPDATE`; values still go through
 * the driver's own conversions (dates, JSON, booleans), so rows read back exactly as TypeORM
 * would have written them.
 */
@Injectable()
export class RequestLogRepository {
  private readonly isPostgres: boolean;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.isPostgres = dataSource.options.type === 'postgres';
  }

  /**
   * Stores a batch and adds it to the rollups. Idempotent: a log whose id is already stored (a
   * replayed spill, a retry after a commit whose answer was lost) is skipped, and only the rows
   * actually inserted are counted, so rollups never count a request twice. Answers how many
   * rows were new.
   */
  async writeBatch(records: readonly LogRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    return this.dataSource.transaction(async (manager) => {
      const inserted = await this.insertLogs(manager, records);
      if (inserted.size === 0) return 0;
      const fresh =
        inserted.size === records.length ? records : records.filter((r) => inserted.has(r.id.toLowerCase()));
      await this.upsertRollups(manager, aggregateRollups(fresh));
      return inserted.size;
    });
  }

  /** A cheap round trip that tells a database outage from a bad row. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  private async insertLogs(manager: EntityManager, records: readonly LogRecord[]): Promise<Set<string>> {
    const metadata = this.dataSource.getMetadata(RequestLogEntity);
    const columns = metadata.columns;
    const rows = records.map((record) => toRow(record) as unknown as Record<string, unknown>);
    const inserted = new Set<string>();
    for (const chunk of chunks(rows, rowsPerStatement(columns.length))) {
      const { sql, parameters } = this.multiRowInsert(metadata.tableName, columns, chunk);
      const returned: { id: string }[] = await manager.query(
        `${sql} ON CONFLICT (${this.quote('id')}) DO NOTHING RETURNING ${this.quote('id')}`,
        parameters,
      );
      for (const row of returned) inserted.add(String(row.id).toLowerCase());
    }
    return inserted;
  }

  private async upsertRollups(manager: EntityManager, deltas: RollupDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    const metadata = this.dataSource.getMetadata(RequestLogRollupEntity);
    const table = this.quote(metadata.tableName);
    const additions = metadata.columns
      .filter((column) => !ROLLUP_KEY_COLUMNS.has(column.databaseName))
      .map((column) => {
        const name = this.quote(column.databaseName);
        return `${name} = ${table}.${name} + excluded.${name}`;
      })
      .join(', ');
    for (const chunk of chunks(deltas.map(rollupRow), rowsPerStatement(metadata.columns.length))) {
      const { sql, parameters } = this.multiRowInsert(metadata.tableName, metadata.columns, chunk);
      await manager.query(`${sql} ON CONFLICT (${this.quote('id')}) DO UPDATE SET ${additions}`, parameters);
    }
  }

  private multiRowInsert(
    tableName: string,
    columns: ColumnMetadata[],
    rows: Record<string, unknown>[],
  ): { sql: string; parameters: unknown[] } {
    const driver = this.dataSource.driver;
    const parameters: unknown[] = [];
    const tuples = rows.map((row) => {
      const placeholders = columns.map((column) => {
        parameters.push(driver.preparePersistentValue(row[column.propertyName], column));
        return this.isPostgres ? `$${parameters.length}` : '?';
      });
      return `(${placeholders.join(', ')})`;
    });
    const names = columns.map((column) => this.quote(column.databaseName)).join(', ');
    return {
      sql: `INSERT INTO ${this.quote(tableName)} (${names}) VALUES ${tuples.join(', ')}`,
      parameters,
    };
  }

  private quote(name: string): string {
    return `"${name}"`;
  }
}
