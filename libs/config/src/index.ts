export * from './app-config';
export * from './config.module';
