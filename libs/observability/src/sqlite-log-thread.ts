import { Logger } from '@nestjs/common';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sqliteModuleName } from '@switchboard/database';
import type { LogRecord } from './log-record';
import type { SqliteLogPlan } from './sqlite-log-store';
import type { SqliteLogWorkerAnswer, SqliteLogWorkerCommand, SqliteLogWorkerData } from './sqlite-log-worker';

/** Where the log writer stores batches: the TypeORM repository, or the SQLite worker thread. */
export interface LogStore {
  /** Stores a batch idempotently; answers how many rows were new. Rejects when the store refused. */
  writeBatch(records: readonly LogRecord[]): Promise<number>;
  /** Resolves when the store answers; rejects during an outage. */
  ping(): Promise<void>;
  close?(): Promise<void>;
}

const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };

type Pending = { resolve: (inserted: number) => void; reject: (error: Error) => void };

/** Under ts-node/Jest the worker is the TypeScript source; from dist it is compiled JavaScript. */
function workerEntry(): { file: string; execArgv: string[] } {
  const extension = extname(__filename);
  const file = join(__dirname, `sqlite-log-worker${extension}`);
  return extension === '.ts'
    ? { file, execArgv: ['--require', require.resolve('ts-node/register/transpile-only')] }
    : { file, execArgv: [] };
}

/**
 * The main thread's side of the SQLite log worker. Each call posts one message (the records are
 * copied by structured clone, a few microseconds each) and resolves with the worker's answer, so
 * the log writer keeps its retry, spill and shutdown logic unchanged. The worker starts on the
 * first call; if it dies, the calls in flight reject (their records stay with the writer, which
 * retries them) and the next call starts a new one.
 */
export class SqliteLogThread implements LogStore {
  private readonly logger = new Logger(SqliteLogThread.name);
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly plan: () => SqliteLogPlan,
    private readonly busyTimeoutMs = 5_000,
  ) {}

  writeBatch(records: readonly LogRecord[]): Promise<number> {
    if (records.length === 0) return Promise.resolve(0);
    return this.call({ kind: 'write', records: records as unknown[] });
  }

  async ping(): Promise<void> {
    await this.call({ kind: 'ping' });
  }

  /** Closes the worker's connection and ends the thread; later calls reject. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    await this.send(worker, { kind: 'close' }).catch(() => undefined);
    await worker.terminate();
  }

  private call(message: SqliteLogWorkerCommand): Promise<number> {
    if (this.closed) return Promise.reject(new Error('The log worker is closed'));
    return this.send(this.worker ?? this.start(), message);
  }

  private send(worker: Worker, message: SqliteLogWorkerCommand): Promise<number> {
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      // Referenced while an answer is awaited: a shutdown drain must not let the process exit under it.
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ ...message, id });
      } catch (error) {
        this.settle(worker, id);
        reject(error as Error);
      }
    });
  }

  private settle(worker: Worker, id: number): Pending | undefined {
    const waiting = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) worker.unref();
    return waiting;
  }

  private start(): Worker {
    const { file, execArgv } = workerEntry();
    const workerData: SqliteLogWorkerData = {
      path: this.path,
      plan: this.plan(),
      busyTimeoutMs: this.busyTimeoutMs,
      sqliteModule: sqliteModuleName(),
    };
    // Its own heap stays small: it holds one batch at a time.
    const worker = new Worker(file, { workerData, execArgv, resourceLimits: WORKER_LIMITS });
    worker.unref();
    worker.on('message', (answer: SqliteLogWorkerAnswer) => {
      const waiting = this.settle(worker, answer.id);
      if (!waiting) return;
      if ('error' in answer) waiting.reject(new Error(answer.error));
      else waiting.resolve(answer.inserted);
    });
    const gone = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', (error) => {
      this.logger.error(`The SQLite log worker failed: ${error.message}`);
      gone(error);
    });
    worker.on('exit', (code) => gone(new Error(`The SQLite log worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }
}
