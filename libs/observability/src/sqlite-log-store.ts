import type { Database, Statement, Transaction } from 'better-sqlite3';
import { DateUtils } from 'typeorm/util/DateUtils';
import type { LogRecord } from './log-record';
import { MAX_PARAMETERS, rollupRow, toRow } from './log-row';
import { aggregateRollups } from './rollup-aggregation';

/**
 * How a column's value is stored by SQLite, as TypeORM's SQLite driver would convert it
 * (`AbstractSqliteDriver.preparePersistentValue`): booleans as 0/1, datetimes as UTC text, JSON
 * as text, everything else as it is.
 */
export type SqliteColumnKind = 'plain' | 'boolean' | 'datetime' | 'json';

export interface SqliteColumnPlan {
  /** Column name in the table. */
  name: string;
  /** Key in the row objects of log-row.ts (the entity property). */
  property: string;
  kind: SqliteColumnKind;
}

export interface SqliteTablePlan {
  table: string;
  columns: SqliteColumnPlan[];
}

/** What the store needs to know of the schema; built once from TypeORM's metadata by the repository. */
export interface SqliteLogPlan {
  logs: SqliteTablePlan;
  rollups: SqliteTablePlan;
  /** Rollup columns that are counters (added to on conflict); the rest identify the row. */
  rollupCounters: string[];
}

function convert(value: unknown, kind: SqliteColumnKind): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'boolean':
      return value === true ? 1 : 0;
    case 'datetime':
      return DateUtils.mixedDateToUtcDatetimeString(value as Date);
    case 'json':
      return DateUtils.simpleJsonToString(value);
    default:
      return value;
  }
}

const quote = (name: string) => `"${name}"`;

/**
 * The SQLite log writes on a better-sqlite3 connection of their own, with the repository's
 * semantics: one transaction per batch, logs inserted with `ON CONFLICT DO NOTHING RETURNING`,
 * rollups added for the rows that were new only, so a replay or a retry never counts twice.
 *
 * Statements are prepared once and reused: a batch is split into chunks whose row counts are
 * powers of two (125 rows: 64 + 32 + 16 + 8 + 4 + 1), so at most a dozen statements per table
 * are ever prepared. Runs in the log worker thread (sqlite-log-worker.ts), where its synchronous
 * work does not hold up the event loop that serves requests.
 */
export class SqliteLogStore {
  private readonly statements = new Map<string, Statement>();
  private readonly insertLogs: (rows: Record<string, unknown>[]) => string[];
  private readonly upsertRollups: (rows: Record<string, unknown>[]) => void;
  private readonly transaction: Transaction<(records: readonly LogRecord[]) => number>;

  constructor(
    private readonly db: Database,
    private readonly plan: SqliteLogPlan,
  ) {
    const counters = new Set(plan.rollupCounters);
    const rollupTable = quote(plan.rollups.table);
    const additions = plan.rollups.columns
      .filter((column) => counters.has(column.name))
      .map(
        (column) =>
          `${quote(column.name)} = ${rollupTable}.${quote(column.name)} + excluded.${quote(column.name)}`,
      )
      .join(', ');
    this.insertLogs = (rows) =>
      this.run(plan.logs, rows, `ON CONFLICT ("id") DO NOTHING RETURNING "id"`, true).map((row) =>
        String((row as { id: string }).id).toLowerCase(),
      );
    this.upsertRollups = (rows) => {
      this.run(plan.rollups, rows, `ON CONFLICT ("id") DO UPDATE SET ${additions}`, false);
    };
    this.transaction = db.transaction((records: readonly LogRecord[]) => {
      const inserted = new Set(this.insertLogs(records.map(toRow)));
      if (inserted.size === 0) return 0;
      const fresh =
        inserted.size === records.length ? records : records.filter((r) => inserted.has(r.id.toLowerCase()));
      this.upsertRollups(aggregateRollups(fresh).map(rollupRow));
      return inserted.size;
    });
  }

  /** Stores a batch and adds it to the rollups, in one transaction. Answers how many rows were new. */
  writeBatch(records: readonly LogRecord[]): number {
    if (records.length === 0) return 0;
    // IMMEDIATE: take the write lock before the first read, so the rollup upsert can never meet a
    // snapshot another connection has moved past (SQLITE_BUSY_SNAPSHOT ignores busy_timeout).
    return this.transaction.immediate(records);
  }

  /** Proves the connection answers. */
  ping(): void {
    this.db.prepare('SELECT 1').get();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Statements prepared so far (for tests: they are reused, not prepared per batch). */
  get preparedStatements(): number {
    return this.statements.size;
  }

  private run(
    table: SqliteTablePlan,
    rows: Record<string, unknown>[],
    suffix: string,
    returning: boolean,
  ): unknown[] {
    const out: unknown[] = [];
    const largest =
      2 ** Math.floor(Math.log2(Math.max(1, Math.floor(MAX_PARAMETERS / table.columns.length))));
    let offset = 0;
    while (offset < rows.length) {
      let size = largest;
      while (size > rows.length - offset) size >>= 1;
      const statement = this.statement(table, size, suffix);
      const parameters: unknown[] = new Array(size * table.columns.length);
      let index = 0;
      for (let row = offset; row < offset + size; row++) {
        const values = rows[row];
        for (const column of table.columns)
          parameters[index++] = convert(values[column.property], column.kind);
      }
      if (returning) out.push(...statement.all(parameters));
      else statement.run(parameters);
      offset += size;
    }
    return out;
  }

  private statement(table: SqliteTablePlan, rows: number, suffix: string): Statement {
    const key = `${table.table}:${rows}`;
    let statement = this.statements.get(key);
    if (!statement) {
      const tuple = `(${table.columns.map(() => '?').join(', ')})`;
      const names = table.columns.map((column) => quote(column.name)).join(', ');
      statement = this.db.prepare(
        `INSERT INTO ${quote(table.table)} (${names}) VALUES ${new Array(rows).fill(tuple).join(', ')} ${suffix}`,
      );
      this.statements.set(key, statement);
    }
    return statement;
  }
}
