/**
 * The TypeORM data source for the CLI (migration:generate, migration:run, migration:show).
 * Run through scripts/generate-migration.sh, which points DATABASE_URL at each dialect in turn.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './libs/config/src/app-config';
import { buildDataSourceOptions } from './libs/database/src/data-source-options';

const config = loadConfig(process.env);

export default new DataSource(
  buildDataSourceOptions(config.database, [`${__dirname}/libs/*/src/**/entities/*.entity.ts`]),
);
