export * from './access.guard';
export * from './auth.errors';
export * from './auth.module';
export * from './authentication.service';
