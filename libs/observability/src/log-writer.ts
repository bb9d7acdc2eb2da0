import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import type { LogRecord } from './log-record';
import { LogSpill } from './log-spill';
import { RequestLogRepository } from './request-log.repository';
import { LogStore, SqliteLogThread } from './sqlite-log-thread';

export interface LogWriterOptions {
  /** Records per insert; reaching it also triggers a write before the timer. */
  batchSize: number;
  flushIntervalMs: number;
  /** Records held in memory at most; past it the newest go to the spill file. */
  maxQueue: number;
  /**
   * Bytes of records held in memory at most, by estimate (bodies dominate: each may be up to
   * GATEWAY_LOG_BODY_MAX_BYTES); past it the newest go to the spill file, as past `maxQueue`.
   * Default DEFAULT_MAX_QUEUE_BYTES.
   */
  maxQueueBytes?: number;
  /** Folder of the spill files (under the data folder). */
  spillDirectory: string;
  /**
   * On a SQLite file, write the batches on a worker thread with a connection of its own
   * (SqliteLogThread), so that the synchronous SQLite work never blocks the requests. Off:
   * through the application's TypeORM connection. PostgreSQL writes are asynchronous and always
   * go through TypeORM.
   */
  sqliteWorker?: boolean;
}

export const LOG_WRITER_OPTIONS = Symbol('LOG_WRITER_OPTIONS');

export const DEFAULT_LOG_WRITER_OPTIONS: Omit<LogWriterOptions, 'spillDirectory'> = {
  batchSize: 500,
  // Short: a record written within a young-generation GC cycle or two dies young instead of being
  // promoted to the old generation, which is what grew the heap (and RSS) under load.
  flushIntervalMs: 50,
  maxQueue: 20_000,
};

const MAX_BACKOFF_MS = 5_000;
/**
 * A count alone does not bound memory: 20,000 records with two 16 KiB bodies each are 640 MB.
 * 32 MB keeps a database outage from growing the heap much past its working size.
 */
export const DEFAULT_MAX_QUEUE_BYTES = 32 * 1024 * 1024;
/** The fixed part of a record in memory (ids, timings, numbers): its strings other than bodies. */
const RECORD_OVERHEAD_BYTES = 1024;

/** What a queued record holds in memory, roughly: its bodies and error text, plus the rest. */
function recordBytes(record: LogRecord): number {
  return (
    RECORD_OVERHEAD_BYTES +
    (record.requestBody?.length ?? 0) +
    (record.responseBody?.length ?? 0) +
    (record.errorMessage?.length ?? 0)
  );
}

function bytesOf(records: readonly LogRecord[]): number {
  let bytes = 0;
  for (const record of records) bytes += recordBytes(record);
  return bytes;
}

/**
 * Writes data-plane log records in batches, off the request path.
 *
 * `enqueue` only pushes onto an array. A timer, or a full batch, starts the pump, which takes a
 * batch and writes it with one multi-row insert plus one rollup upsert in one transaction. While
 * the database is slow or down, records wait in memory up to `maxQueue`; past that the newest are
 * appended to a JSONL spill file, and after the next successful write the spill files are
 * replayed. Writes are idempotent by log id, so a replay or a retry never doubles a log or a
 * rollup count. Shutdown drains the queue while the database is still open and spills whatever
 * it could not write. A batch the database refuses while it answers a ping holds a bad row: it is
 * written row by row and only the refused rows are set aside in a `rejected-*.jsonl` file.
 */
@Injectable()
export class LogWriter implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(LogWriter.name);
  private readonly spill: LogSpill;
  private readonly store: LogStore;
  private queue: LogRecord[] = [];
  /** recordBytes() of the queue, kept with it: every change to `queue` goes through this count. */
  private queuedBytes = 0;
  private readonly maxQueueBytes: number;
  private timer: NodeJS.Timeout | null = null;
  private pumping: Promise<void> | null = null;
  private spilling: Promise<void> | null = null;
  private kickScheduled = false;
  private failures = 0;
  private retryAt = 0;
  /** Spill files may exist (ours, or a previous process's): look for them after the next good write. */
  private replayDue = true;
  private closed = false;

  constructor(
    private readonly repository: RequestLogRepository,
    @Inject(LOG_WRITER_OPTIONS) private readonly options: LogWriterOptions,
  ) {
    this.spill = new LogSpill(options.spillDirectory);
    this.maxQueueBytes = options.maxQueueBytes ?? DEFAULT_MAX_QUEUE_BYTES;
    const sqliteFile = options.sqliteWorker ? repository.sqliteFile : null;
    this.store = sqliteFile ? new SqliteLogThread(sqliteFile, () => repository.sqlitePlan()) : repository;
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.pump(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /**
   * Queues one record. On the gateway's hot path: no serialisation, no I/O, no await, and it
   * never throws; the common case is one push and one comparison.
   */
  enqueue(record: LogRecord): void {
    this.queuedBytes += recordBytes(record);
    if (
      (this.queue.push(record) >= this.options.batchSize || this.queuedBytes > this.maxQueueBytes) &&
      !this.kickScheduled
    )
      this.kick();
  }

  /** Past either bound: the newest records go to disk. */
  private get overflowing(): boolean {
    return this.queue.length > this.options.maxQueue || this.queuedBytes > this.maxQueueBytes;
  }

  /** Puts records back at the head of the queue (a failed write): they stay first in line. */
  private requeue(records: LogRecord[]): void {
    this.queue = records.concat(this.queue);
    this.queuedBytes += bytesOf(records);
  }

  /** Records waiting in memory (not counting spilled ones). */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Writes what is queued now (records queued meanwhile may wait for the next tick). Resolves
   * when written, or when the database refused and the records went back to wait or to the
   * spill file; never rejects.
   */
  async flush(): Promise<void> {
    const rounds = Math.ceil(this.queue.length / this.options.batchSize) + 1;
    for (let round = 0; round < rounds && this.queue.length > 0; round++) {
      const before = this.queue.length;
      this.retryAt = 0;
      await this.pump();
      if (this.queue.length >= before) break;
    }
  }

  /** Drains while the database is still open (TypeORM closes it in its own shutdown hook). */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.drainOrSpill();
  }

  /** Requests that finished after the drain above still land: in the database, or on disk. */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.drainOrSpill();
    await this.spill.close().catch((error: Error) => {
      this.logger.error(`Could not hand over the spill file: ${error.message}`);
    });
    await this.store.close?.();
  }

  private kick(): void {
    this.kickScheduled = true;
    // After the current request's I/O: the size trigger must not run the write on the hot path.
    setImmediate(() => {
      this.kickScheduled = false;
      if (this.overflowing) void this.spillOverflow();
      if (!this.pumping) void this.pump();
    });
  }

  /** One writer at a time; a timer tick while a write is in flight just returns. */
  private pump(): Promise<void> {
    if (this.pumping) return this.pumping;
    this.pumping = this.runPump().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  private async runPump(): Promise<void> {
    let wrote = false;
    while (this.queue.length > 0 && Date.now() >= this.retryAt) {
      if (this.overflowing) await this.spillOverflow();
      const batch = this.take();
      try {
        await this.store.writeBatch(batch);
        this.failures = 0;
        wrote = true;
      } catch (error) {
        await this.onWriteFailure(batch, error);
        return;
      }
      // A full queue is drained batch after batch; a partial one waits for the next tick.
      if (this.queue.length < this.options.batchSize) break;
    }
    const healthy = wrote || (this.queue.length === 0 && Date.now() >= this.retryAt);
    if (healthy && (this.replayDue || this.spill.hasOwnSpill) && !this.closed) await this.replay();
  }

  private take(): LogRecord[] {
    if (this.queue.length <= this.options.batchSize) {
      const batch = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      return batch;
    }
    const batch = this.queue.splice(0, this.options.batchSize);
    this.queuedBytes -= bytesOf(batch);
    return batch;
  }

  private async onWriteFailure(batch: LogRecord[], error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const databaseUp = await this.store.ping().then(
      () => true,
      () => false,
    );
    if (databaseUp && batch.length > 1) {
      this.logger.warn(`A log batch was refused (${message}); writing its records one by one`);
      await this.writeOneByOne(batch);
      return;
    }
    if (databaseUp) {
      this.logger.error(`A log record was refused and set aside: ${message}`);
      await this.spill.reject(batch[0], message).catch((rejectError: Error) => {
        this.logger.error(`Could not set aside a refused log record: ${rejectError.message}`);
        this.requeue(batch);
      });
      return;
    }
    this.failures += 1;
    const backoff = Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.failures);
    this.retryAt = Date.now() + backoff;
    this.logger.error(`Log write failed (${message}); retrying in ${backoff} ms`);
    this.requeue(batch);
    if (this.overflowing) await this.spillOverflow();
  }

  private async writeOneByOne(batch: LogRecord[]): Promise<void> {
    for (let index = 0; index < batch.length; index++) {
      const record = batch[index];
      try {
        await this.store.writeBatch([record]);
      } catch (error) {
        const up = await this.store.ping().then(
          () => true,
          () => false,
        );
        if (!up) {
          // The database went away mid-way: the rest waits for it like any other batch.
          this.requeue(batch.slice(index));
          this.failures += 1;
          this.retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.failures);
          return;
        }
        const message = error instanceof Error ? error.message : String(error);
        await this.spill.reject(record, message).catch(() => {
          this.logger.error(`Could not set aside a refused log record ${record.id}`);
        });
      }
    }
  }

  /** Moves the newest records past half the bounds to disk; the oldest stay first in line. */
  private spillOverflow(): Promise<void> {
    if (this.spilling) return this.spilling;
    let keep = 0;
    let kept = 0;
    const maxKeep = Math.min(this.queue.length, Math.floor(this.options.maxQueue / 2));
    while (keep < maxKeep) {
      const bytes = recordBytes(this.queue[keep]);
      if (kept + bytes > this.maxQueueBytes / 2) break;
      kept += bytes;
      keep += 1;
    }
    if (this.queue.length <= keep) return Promise.resolve();
    const overflow = this.queue.splice(keep);
    this.queuedBytes = kept;
    this.spilling = this.toDisk(overflow).finally(() => {
      this.spilling = null;
    });
    return this.spilling;
  }

  private async toDisk(records: LogRecord[]): Promise<void> {
    try {
      await this.spill.append(records);
      this.logger.warn(
        `The database is behind: ${records.length} log records spilled to ${this.spill.directory}`,
      );
    } catch (error) {
      // The disk refused too: keep them in memory rather than lose them.
      this.logger.error(`Could not spill log records: ${(error as Error).message}`);
      this.queue.push(...records);
      this.queuedBytes += bytesOf(records);
    }
  }

  private async replay(): Promise<void> {
    let files: string[];
    try {
      files = await this.spill.claim();
    } catch (error) {
      this.logger.error(`Could not look for spilled logs: ${(error as Error).message}`);
      return;
    }
    this.replayDue = false;
    for (const file of files) {
      let replayed = 0;
      try {
        for await (const { records, torn } of this.spill.read(file, this.options.batchSize)) {
          if (torn > 0) this.logger.warn(`Skipped ${torn} torn line(s) in ${file}`);
          if (records.length > 0) replayed += await this.store.writeBatch(records);
        }
        await this.spill.remove(file);
        if (replayed > 0) this.logger.log(`Replayed ${replayed} spilled log records from ${file}`);
      } catch (error) {
        // The file stays claimed by this process; the next replay starts it over (writes are idempotent).
        this.replayDue = true;
        this.failures += 1;
        this.retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.failures);
        this.logger.error(`Replay of ${file} stopped: ${(error as Error).message}`);
        return;
      }
    }
  }

  private async drainOrSpill(): Promise<void> {
    await this.pumping;
    await this.spilling;
    while (this.queue.length > 0) {
      const batch = this.take();
      try {
        await this.store.writeBatch(batch);
      } catch {
        this.requeue(batch);
        break;
      }
    }
    if (this.queue.length === 0) return;
    const rest = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    try {
      await this.spill.append(rest);
      this.logger.warn(`Shutdown: ${rest.length} log records spilled to ${this.spill.directory}`);
    } catch (error) {
      this.requeue(rest);
      this.logger.error(
        `Shutdown: ${rest.length} log records could not be stored: ${(error as Error).message}`,
      );
    }
  }
}
