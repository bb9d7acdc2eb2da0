/**
 * The TypeORM data source for the CLI (migration:generate, migration:run, migration:show).
 * Run through scripts/generate-migration.sh, which points DATABASE_URL at each dialect in turn.
 */
import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { loadConfig } from './libs/config/src/app-config';
import { buildDataSourceOptions } from './libs/database/src/data-source-options';

const config = loadConfig(process.env);

// MIGRATION_SKIP_LIBS (comma-separated lib names) leaves those libs' entities out, so work in
// progress in one lib does not leak into a migration generated for another. Tables of skipped
// libs that earlier migrations made are left alone: generation never drops unknown tables.
const skipped = new Set((process.env.MIGRATION_SKIP_LIBS ?? '').split(',').filter(Boolean));
const libs = readdirSync(`${__dirname}/libs`).filter((lib) => !skipped.has(lib));

export default new DataSource(
  buildDataSourceOptions(
    config.database,
    libs.map((lib) => `${__dirname}/libs/${lib}/src/**/entities/*.entity.ts`),
  ),
);
