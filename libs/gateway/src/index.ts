export * from './body-parsers';
export * from './gateway.errors';
export * from './gateway.module';
export * from './gateway.service';
export * from './provider-resolution';
export * from './request-headers';
export * from './request-validation';
export { REALTIME_PATH, RealtimeProxy } from './realtime/realtime.proxy';
