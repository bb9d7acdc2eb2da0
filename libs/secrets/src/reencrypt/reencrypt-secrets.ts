import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource, QueryRunner } from 'typeorm';
import type { AppConfig } from '@switchboard/config';
import { runLocked } from '@switchboard/database';
import { SecretCipher, loadMasterKey } from '../secret-cipher';

/** The whole stored form, strictly: prefix, 8-hex key id, then IV, tag and ciphertext in base64url. */
const SEALED = /^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]*$/;
const PREFIX = 'enc:v1:';
/** Also the lock migrations take: a re-encryption never interleaves with another, nor with a migration. */
export const REENCRYPT_LOCK = 'migrations';

export interface ReencryptOptions {
  /** Count what would change; write nothing. */
  dryRun?: boolean;
  /** Tables left alone (besides the migrations table). */
  skipTables?: string[];
}

export interface ColumnReport {
  table: string;
  column: string;
  /** Encrypted values found (whole values and JSON string leaves). */
  sealed: number;
  /** Already under the current key. */
  current: number;
  /** Re-sealed under the current key (or, in a dry run, that would be). */
  rewritten: number;
  /** Rows whose value changed between our read and our write; the next run picks them up. */
  changedConcurrently: number;
  /** Values starting with `enc:v1:` that are not a well-formed encrypted value; left alone. */
  malformed: number;
}

export interface TableFailure {
  table: string;
  column?: string;
  message: string;
}

export interface ReencryptReport {
  currentKeyId: string;
  dryRun: boolean;
  tablesScanned: number;
  columns: ColumnReport[];
  rewritten: number;
  failures: TableFailure[];
}

type ColumnKind = 'text' | 'json' | 'jsonb';

interface TableShape {
  name: string;
  primaryKey: string[];
  columns: { name: string; kind: ColumnKind }[];
}

class TableError extends Error {
  constructor(
    readonly column: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Re-seals every stored encrypted value under the cipher's current master key. Tables and
 * columns are discovered from the database itself (every text and JSON column of every table),
 * so columns added later by any area are covered without a list to maintain. Values are either
 * whole column values or string leaves inside JSON text. Each table is rewritten in one
 * transaction; each row update is conditional on the value read, so a concurrent write is never
 * overwritten. Runs under the migrations lock; a second run finds nothing to do.
 */
export async function reencryptSecrets(
  dataSource: DataSource,
  database: AppConfig['database'],
  cipher: SecretCipher,
  options: ReencryptOptions = {},
): Promise<ReencryptReport> {
  return runLocked(dataSource, database, REENCRYPT_LOCK, async () => {
    const report: ReencryptReport = {
      currentKeyId: cipher.currentKeyId,
      dryRun: options.dryRun === true,
      tablesScanned: 0,
      columns: [],
      rewritten: 0,
      failures: [],
    };
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      const postgres = dataSource.options.type === 'postgres';
      const migrationsTable = dataSource.options.migrationsTableName ?? 'migrations';
      const skip = new Set([migrationsTable, 'typeorm_metadata', ...(options.skipTables ?? [])]);
      const tables = (postgres ? await postgresTables(runner) : await sqliteTables(runner)).filter(
        (table) => !skip.has(table.name) && table.columns.length > 0,
      );
      for (const table of tables) {
        report.tablesScanned += 1;
        const columns = table.columns.map<ColumnReport>((column) => ({
          table: table.name,
          column: column.name,
          sealed: 0,
          current: 0,
          rewritten: 0,
          changedConcurrently: 0,
          malformed: 0,
        }));
        await runner.startTransaction();
        try {
          await rewriteTable(runner, postgres, table, columns, cipher, report.dryRun);
          if (report.dryRun) await runner.rollbackTransaction();
          else await runner.commitTransaction();
          for (const column of columns) {
            if (column.sealed > 0 || column.malformed > 0) report.columns.push(column);
            report.rewritten += column.rewritten;
          }
        } catch (error) {
          await runner.rollbackTransaction();
          report.failures.push({
            table: table.name,
            column: error instanceof TableError ? error.column : undefined,
            message: (error as Error).message,
          });
        }
      }
    } finally {
      await runner.release();
    }
    return report;
  });
}

async function rewriteTable(
  runner: QueryRunner,
  postgres: boolean,
  table: TableShape,
  reports: ColumnReport[],
  cipher: SecretCipher,
  dryRun: boolean,
): Promise<void> {
  const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const asText = (column: TableShape['columns'][number]) =>
    postgres && column.kind !== 'text' ? `${q(column.name)}::text` : q(column.name);
  const p = (index: number) => (postgres ? `$${index}` : '?');

  const select = [
    ...table.primaryKey.map((name, i) => `${q(name)} AS ${q(`__pk${i}`)}`),
    ...table.columns.map((column, i) => `${asText(column)} AS ${q(`__c${i}`)}`),
  ].join(', ');
  const where = table.columns.map((column) => `${asText(column)} LIKE '%${PREFIX}%'`).join(' OR ');
  const rows: Record<string, unknown>[] = await runner.query(
    `SELECT ${select} FROM ${q(table.name)} WHERE ${where}`,
  );

  for (const row of rows) {
    for (let i = 0; i < table.columns.length; i++) {
      const column = table.columns[i];
      const before = row[`__c${i}`];
      if (typeof before !== 'string') continue;
      let after: string | null;
      try {
        after = rewriteValue(before, cipher, reports[i]);
      } catch (error) {
        throw new TableError(column.name, `${table.name}.${column.name}: ${(error as Error).message}`);
      }
      if (after === null || dryRun) continue;
      const cast = postgres && column.kind !== 'text' ? `::${column.kind}` : '';
      const params: unknown[] = [after];
      const conditions: string[] = [];
      table.primaryKey.forEach((name, k) => {
        params.push(row[`__pk${k}`]);
        conditions.push(`${q(name)} = ${p(params.length)}`);
      });
      params.push(before);
      conditions.push(`${asText(column)} = ${p(params.length)}`);
      const result = await runner.query(
        `UPDATE ${q(table.name)} SET ${q(column.name)} = ${p(1)}${cast} WHERE ${conditions.join(' AND ')}`,
        params,
        true,
      );
      if (!result.affected) {
        // Someone wrote the row after we read it; their value is theirs to keep.
        reports[i].changedConcurrently += 1;
        reports[i].rewritten -= countSealedUnderOtherKeys(before, cipher.currentKeyId);
      }
    }
  }
}

/**
 * The value re-sealed under the current key, or null when nothing in it needs to change.
 * Updates the column's counts. Throws when a value cannot be opened (a key missing from
 * GATEWAY_ENCRYPTION_KEYS_PREVIOUS, or a damaged value): that table is then left untouched.
 */
export function rewriteValue(value: string, cipher: SecretCipher, counts: ColumnReport): string | null {
  if (value.startsWith(PREFIX)) {
    if (!SEALED.test(value)) {
      counts.malformed += 1;
      return null;
    }
    counts.sealed += 1;
    if (SecretCipher.keyIdOf(value) === cipher.currentKeyId) {
      counts.current += 1;
      return null;
    }
    counts.rewritten += 1;
    return cipher.reencrypt(value);
  }
  if (!value.includes(`"${PREFIX}`)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null; // Text that merely mentions the prefix.
  }
  const leaves: string[] = [];
  collectSealedLeaves(parsed, leaves);
  let text = value;
  let changed = false;
  for (const leaf of new Set(leaves)) {
    const occurrences = leaves.filter((l) => l === leaf).length;
    counts.sealed += occurrences;
    if (SecretCipher.keyIdOf(leaf) === cipher.currentKeyId) {
      counts.current += occurrences;
      continue;
    }
    // Sealed values are base64url and colons, so their JSON text is the value in quotes: a
    // literal replacement keeps every other byte of the document (key order, numbers) as it was.
    const replacement = cipher.reencrypt(leaf);
    text = text.split(`"${leaf}"`).join(`"${replacement}"`);
    counts.rewritten += occurrences;
    changed = true;
  }
  if (!changed) return null;
  const check: string[] = [];
  collectSealedLeaves(JSON.parse(text), check);
  if (
    check.length !== leaves.length ||
    check.some((leaf) => SecretCipher.keyIdOf(leaf) !== cipher.currentKeyId)
  ) {
    throw new Error('re-sealing a JSON value did not replace every encrypted leaf; nothing was written');
  }
  return text;
}

function collectSealedLeaves(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    if (SEALED.test(value)) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collectSealedLeaves(item, out);
  } else if (value && typeof value === 'object') {
    for (const item of Object.values(value)) collectSealedLeaves(item, out);
  }
}

function countSealedUnderOtherKeys(value: string, currentKeyId: string): number {
  if (value.startsWith(PREFIX))
    return SEALED.test(value) && SecretCipher.keyIdOf(value) !== currentKeyId ? 1 : 0;
  try {
    const leaves: string[] = [];
    collectSealedLeaves(JSON.parse(value), leaves);
    return leaves.filter((leaf) => SecretCipher.keyIdOf(leaf) !== currentKeyId).length;
  } catch {
    return 0;
  }
}

async function postgresTables(runner: QueryRunner): Promise<TableShape[]> {
  // Partitions are reached through their parent table; scanning them again would double the work.
  const tables: { name: string }[] = await runner.query(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
     ORDER BY c.relname`,
  );
  const columns: { table: string; name: string; type: string }[] = await runner.query(
    `SELECT table_name AS "table", column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = current_schema()
       AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')
     ORDER BY table_name, ordinal_position`,
  );
  const keys: { table: string; name: string }[] = await runner.query(
    `SELECT kcu.table_name AS "table", kcu.column_name AS name
     FROM information_schema.table_constraints tc
     JOIN information_schema.key_column_usage kcu
       ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema AND kcu.table_name = tc.table_name
     WHERE tc.table_schema = current_schema() AND tc.constraint_type = 'PRIMARY KEY'
     ORDER BY kcu.table_name, kcu.ordinal_position`,
  );
  return tables.map(({ name }) => ({
    name,
    primaryKey: keys.filter((key) => key.table === name).map((key) => key.name),
    columns: columns
      .filter((column) => column.table === name)
      .map((column) => ({
        name: column.name,
        kind: column.type === 'json' ? 'json' : column.type === 'jsonb' ? 'jsonb' : 'text',
      })),
  }));
}

async function sqliteTables(runner: QueryRunner): Promise<TableShape[]> {
  const tables: { name: string }[] = await runner.query(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
  );
  const shapes: TableShape[] = [];
  for (const { name } of tables) {
    const info: { name: string; type: string; pk: number }[] = await runner.query(
      `PRAGMA table_info("${name.replace(/"/g, '""')}")`,
    );
    shapes.push({
      name,
      primaryKey: info
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name),
      // SQLite stores text in any column without a numeric or blob affinity (JSON included).
      columns: info
        .filter((column) => !/INT|REAL|FLOA|DOUB|BLOB|BOOL/i.test(column.type))
        .map((column) => ({ name: column.name, kind: 'text' as const })),
    });
  }
  return shapes;
}

/**
 * The master key to re-seal under: GATEWAY_ENCRYPTION_KEY, or the key file the server generated
 * into the data folder. Never generates one: a re-encryption under a key nobody kept would lose
 * every secret.
 */
export function currentMasterKey(config: AppConfig): string {
  if (config.encryptionKey) return config.encryptionKey;
  if (existsSync(join(config.dataDir, 'encryption.key'))) {
    return loadMasterKey(config, { warn: () => undefined });
  }
  throw new Error(
    `GATEWAY_ENCRYPTION_KEY is not set and ${join(config.dataDir, 'encryption.key')} does not exist: set GATEWAY_ENCRYPTION_KEY to the new master key`,
  );
}

export function formatReencryptReport(report: ReencryptReport): string[] {
  const verb = report.dryRun ? 'would re-encrypt' : 're-encrypted';
  const lines = [
    `Current master key id: ${report.currentKeyId}${report.dryRun ? ' (dry run: nothing written)' : ''}`,
    `Scanned ${report.tablesScanned} table(s).`,
  ];
  for (const column of report.columns) {
    const extras = [
      column.changedConcurrently ? `${column.changedConcurrently} changed concurrently` : '',
      column.malformed ? `${column.malformed} malformed (left alone)` : '',
    ].filter(Boolean);
    lines.push(
      `  ${column.table}.${column.column}: ${column.sealed} encrypted, ${column.current} already current, ${verb} ${column.rewritten}${
        extras.length ? `, ${extras.join(', ')}` : ''
      }`,
    );
  }
  lines.push(`Total ${verb}: ${report.rewritten}.`);
  for (const failure of report.failures) {
    lines.push(
      `FAILED ${failure.table}${failure.column ? `.${failure.column}` : ''}: ${failure.message} (table left unchanged)`,
    );
  }
  return lines;
}
