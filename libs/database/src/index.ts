export * from './columns';
export * from './data-source-options';
export * from './database.module';
export * from './file-lock';
export * from './lock.service';
export * from './sqlite-transaction-gate';
export * from './sqlite-module';
