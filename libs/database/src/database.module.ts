import { Global, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { buildDataSourceOptions } from './data-source-options';
import { LockService, runLocked } from './lock.service';
import { gateSqliteTransactions } from './sqlite-transaction-gate';

const logger = new Logger('Database');

/** Opens the data source and brings the schema up to date under a lock before anything uses it. */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        ...buildDataSourceOptions(config.database),
        autoLoadEntities: true,
      }),
      dataSourceFactory: async (options) => {
        if (!options) throw new Error('No data source options');
        const dataSource = await new DataSource(options).initialize();
        const database: AppConfig['database'] =
          options.type === 'postgres'
            ? { kind: 'postgres', url: String(options.url) }
            : { kind: 'sqlite', path: String(options.database) };
        await runLocked(dataSource, database, 'migrations', async () => {
          const applied = await dataSource.runMigrations({ transaction: 'each' });
          if (applied.length > 0)
            logger.log(`Applied ${applied.length} migration(s): ${applied.map((m) => m.name).join(', ')}`);
        });
        gateSqliteTransactions(dataSource);
        return dataSource;
      },
    }),
  ],
  providers: [LockService],
  exports: [LockService],
})
export class DatabaseModule {}
