export * from './app-config';
export * from './config.module';
export * from './policies-settings';
