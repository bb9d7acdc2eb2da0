import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { tryWithFileLock, withFileLock } from './file-lock';

/** A stable signed 64-bit advisory lock key for a lock name. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(`switchboard:${name}`).digest().readBigInt64BE(0).toString();
}

/**
 * Cross-replica mutual exclusion for migrations and scheduled jobs: a PostgreSQL session advisory
 * lock, or a lock file beside the SQLite database (SQLite is single-host by nature).
 */
@Injectable()
export class LockService {
  private readonly logger = new Logger(LockService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Runs `fn` if no other process holds `name` right now; true when it ran. */
  async tryRun(name: string, fn: () => Promise<void>): Promise<boolean> {
    return tryRunLocked(this.dataSource, this.config.database, name, fn);
  }

  /** Runs `fn` holding `name`, waiting for another holder to finish. */
  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return runLocked(this.dataSource, this.config.database, name, fn);
  }

  get log(): Logger {
    return this.logger;
  }
}

export async function tryRunLocked(
  dataSource: DataSource,
  database: AppConfig['database'],
  name: string,
  fn: () => Promise<void>,
): Promise<boolean> {
  if (database.kind === 'sqlite') {
    const ran = await tryWithFileLock(`${database.path}.${name}.lock`, async () => {
      await fn();
      return true;
    });
    return ran === true;
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const key = advisoryKey(name);
    const [row] = await runner.query('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]);
    if (!row.locked) return false;
    try {
      await fn();
      return true;
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    }
  } finally {
    await runner.release();
  }
}

export async function runLocked<T>(
  dataSource: DataSource,
  database: AppConfig['database'],
  name: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (database.kind === 'sqlite') {
    if (database.path === ':memory:') return fn();
    return withFileLock(`${database.path}.${name}.lock`, fn);
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const key = advisoryKey(name);
  try {
    await runner.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    try {
      return await fn();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    }
  } finally {
    await runner.release();
  }
}
