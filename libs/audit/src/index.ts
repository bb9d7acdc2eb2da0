export * from './audit.interceptor';
export * from './audit.module';
export * from './audit.service';
