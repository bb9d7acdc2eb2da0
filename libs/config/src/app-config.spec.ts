import { ConfigValidationError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      database: { kind: 'sqlite', path: './data/gateway.db' },
      redisUrl: null,
      adminKey: null,
      encryptionKey: null,
      previousEncryptionKeys: [],
      jobsEnabled: true,
      policies: { redisPrefix: 'switchboard:policies:', flushIntervalMs: 1000, smtp: null },
    });
  });

  it('reads postgres and redis URLs', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/db',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u@127.0.0.1:5432/db' });
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
  });

  it('lists every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        REDIS_URL: 'http://x',
        GATEWAY_ADMIN_KEY: 'short',
        GATEWAY_ENCRYPTION_KEY: 'nope',
        GATEWAY_JOBS: 'maybe',
        GATEWAY_POLICY_FLUSH_MS: '10',
        SMTP_URL: 'http://mail',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const problems = (error as ConfigValidationError).problems.join('\n');
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'REDIS_URL',
      'GATEWAY_ADMIN_KEY',
      'GATEWAY_ENCRYPTION_KEY',
      'GATEWAY_JOBS',
      'GATEWAY_POLICY_FLUSH_MS',
      'SMTP_URL',
    ]) {
      expect(problems).toContain(name);
    }
  });

  it('rejects a port out of range', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT must be between 0 and 65535/);
  });

  it('accepts a 32-byte encryption key as hex or base64', () => {
    expect(loadConfig({ GATEWAY_ENCRYPTION_KEY: 'a'.repeat(64) }).encryptionKey).toBe('a'.repeat(64));
    const base64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ GATEWAY_ENCRYPTION_KEY: base64 }).encryptionKey).toBe(base64);
  });
});
