export * from './api-key-expiry.job';
export * from './api-keys.errors';
export * from './api-keys.module';
export * from './api-keys.service';
export type { ApiKeyDefaults, ApiKeyStatus } from './entities/api-key.entity';
export * from './key-material';
