import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions, MixedList } from 'typeorm';
import type { AppConfig } from '@switchboard/config';
import { postgresMigrations } from './migrations/postgres';
import { sqliteMigrations } from './migrations/sqlite';
import { sqliteModule } from './sqlite-module';

type EntityList = MixedList<string | (new (...args: never[]) => unknown)>;

/** The one place that turns DATABASE_URL into TypeORM options. Never `synchronize`. */
export function buildDataSourceOptions(
  database: AppConfig['database'],
  entities?: EntityList,
): DataSourceOptions {
  if (database.kind === 'postgres') {
    return {
      type: 'postgres',
      url: database.url,
      entities,
      migrations: postgresMigrations,
      migrationsRun: false,
      synchronize: false,
      extra: { max: 20 },
    };
  }
  if (database.path !== ':memory:') mkdirSync(dirname(database.path), { recursive: true });
  return {
    type: 'better-sqlite3',
    driver: sqliteModule(),
    database: database.path,
    entities,
    migrations: sqliteMigrations,
    migrationsRun: false,
    synchronize: false,
    // WAL lets readers proceed while the batched log writer holds the write lock.
    prepareDatabase: (db: { pragma(source: string): unknown }) => {
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
    },
  };
}
