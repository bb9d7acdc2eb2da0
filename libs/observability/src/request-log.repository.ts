import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { LogRecord } from './log-record';
import { MAX_PARAMETERS, ROLLUP_KEY_COLUMNS, rollupRow, toRow } from './log-row';
import { RollupDelta, aggregateRollups } from './rollup-aggregation';
import type { LogStore } from './sqlite-log-thread';
import type { SqliteColumnKind, SqliteLogPlan, SqliteTablePlan } from './sqlite-log-store';
import { RequestLogEntity } from './entities/request-log.entity';
import { RequestLogRollupEntity } from './entities/request-log-rollup.entity';

function rowsPerStatement(columnCount: number): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS / columnCount));
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

/** How TypeORM's SQLite driver converts a column's values; the SQLite log store does the same. */
export function sqliteKind(column: ColumnMetadata): SqliteColumnKind {
  if (column.transformer) throw new Error(`Column ${column.databaseName} has a transformer`);
  const type = column.type;
  if (type === Boolean || type === 'boolean') return 'boolean';
  if (type === Date || type === 'datetime') return 'datetime';
  if (type === 'json' || type === 'jsonb' || type === 'simple-json') return 'json';
  if (typeof type === 'string' && ['date', 'time', 'simple-array', 'simple-enum'].includes(type)) {
    throw new Error(
      `Column ${column.databaseName} has a type the SQLite log store does not convert (${type})`,
    );
  }
  return 'plain';
}

/**
 * The log store's writes: one multi-row insert for a batch of logs and one upsert for its
 * rollups, in one transaction. Raw SQL because TypeORM's builder can express neither
 * `ON CONFLICT DO NOTHING RETURNING` portably nor additive `DO UPDATE`; values still go through
 * the driver's own conversions (dates, JSON, booleans), so rows read back exactly as TypeORM
 * would have written them.
 */
@Injectable()
export class RequestLogRepository implements LogStore {
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

  /**
   * The SQLite database file, when the logs can be written by a connection of their own (the
   * worker thread); null on PostgreSQL and for an in-memory database.
   */
  get sqliteFile(): string | null {
    if (this.isPostgres) return null;
    const database = this.dataSource.options.database;
    return typeof database === 'string' && database !== '' && database !== ':memory:' ? database : null;
  }

  /** The two tables as the SQLite log store writes them, from the entities' metadata. */
  sqlitePlan(): SqliteLogPlan {
    const table = (target: typeof RequestLogEntity | typeof RequestLogRollupEntity): SqliteTablePlan => {
      const metadata = this.dataSource.getMetadata(target);
      return {
        table: metadata.tableName,
        columns: metadata.columns.map((column) => ({
          name: column.databaseName,
          property: column.propertyName,
          kind: sqliteKind(column),
        })),
      };
    };
    const rollups = table(RequestLogRollupEntity);
    return {
      logs: table(RequestLogEntity),
      rollups,
      rollupCounters: rollups.columns
        .map((column) => column.name)
        .filter((name) => !ROLLUP_KEY_COLUMNS.has(name)),
    };
  }

  /** A cheap round trip that tells a database outage from a bad row. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  private async insertLogs(manager: EntityManager, records: readonly LogRecord[]): Promise<Set<string>> {
    const metadata = this.dataSource.getMetadata(RequestLogEntity);
    const columns = metadata.columns;
    const rows = records.map(toRow);
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
