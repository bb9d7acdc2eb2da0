import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteLogPlan, SqliteLogStore } from './sqlite-log-store';

/**
 * The SQLite log worker thread: owns a connection of its own to the database file and runs the
 * batch writes there, so their synchronous work (SQL, rollups, fsync at commit) never blocks the
 * event loop serving requests. Started by SqliteLogThread; one message in, one answer out.
 */

export interface SqliteLogWorkerData {
  path: string;
  plan: SqliteLogPlan;
  busyTimeoutMs: number;
  /** The better-sqlite3 module the main thread chose for this Node (sqliteModuleName()). */
  sqliteModule: string;
}

export type SqliteLogWorkerCommand =
  { kind: 'write'; records: unknown[] } | { kind: 'ping' } | { kind: 'close' };

export type SqliteLogWorkerRequest = SqliteLogWorkerCommand & { id: number };

export type SqliteLogWorkerAnswer = { id: number; inserted: number } | { id: number; error: string };

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('sqlite-log-worker runs as a worker thread');
  const data = workerData as SqliteLogWorkerData;
  const Database = createRequire(__filename)(data.sqliteModule) as typeof BetterSqlite3;
  const db = new Database(data.path, { fileMustExist: true, timeout: data.busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  // Each multi-row insert inside the batch's transaction keeps a statement journal; on disk that
  // was a temporary file created, written and unlinked for every batch.
  db.pragma('temp_store = MEMORY');
  const store = new SqliteLogStore(db, data.plan);
  port.on('message', (message: SqliteLogWorkerRequest) => {
    let answer: SqliteLogWorkerAnswer;
    try {
      if (message.kind === 'write') {
        answer = { id: message.id, inserted: store.writeBatch(message.records as never) };
      } else {
        if (message.kind === 'close') store.close();
        else store.ping();
        answer = { id: message.id, inserted: 0 };
      }
    } catch (error) {
      answer = { id: message.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer);
    if (message.kind === 'close') port.close();
  });
}

main();
