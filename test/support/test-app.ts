import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createApp } from '../../apps/server/src/create-app';
import { AppConfig, loadConfig } from '../../libs/config/src';

export type Dialect = 'sqlite' | 'postgres';

export function currentDialect(): Dialect {
  return process.env.SWITCHBOARD_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
}

/**
 * `describe` for the e2e suites: runs on SQLite always; in the e2e-postgres project it runs when
 * a PostgreSQL URL was given and otherwise skips, saying why.
 */
export function describeE2E(name: string, body: () => void): void {
  if (currentDialect() === 'postgres' && !process.env.SWITCHBOARD_TEST_POSTGRES_URL) {
    describe.skip(`${name} [postgres: skipped, DATABASE_URL is not a postgres:// URL]`, body);
    return;
  }
  describe(`${name} [${currentDialect()}]`, body);
}

/** A test that needs Redis: runs when REDIS_URL is set, otherwise skips and prints `why`. */
export function itWithRedis(name: string, body: () => Promise<void>, why = 'REDIS_URL is not set'): void {
  if (process.env.REDIS_URL) it(name, body);
  else it.skip(`${name} [skipped: ${why}]`, body);
}

/** describeE2E for a suite that needs Redis: without REDIS_URL it skips and prints `why`. */
export function describeE2EWithRedis(name: string, body: () => void, why: string): void {
  if (process.env.REDIS_URL) describeE2E(name, body);
  else describe.skip(`${name} [${currentDialect()}: skipped, REDIS_URL is not set: ${why}]`, body);
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A database of its own for one test file: a temp SQLite file, or a fresh PostgreSQL database. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (currentDialect() === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-test-'));
    return {
      url: `sqlite:${join(dir, 'gateway.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const base = new URL(process.env.SWITCHBOARD_TEST_POSTGRES_URL!);
  const name = `sb_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: base.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export const TEST_ADMIN_KEY = `sb-test-admin-${'x'.repeat(40)}`;
/** The master key of test apps: tests that look for ciphertext can open it with this. */
export const TEST_ENCRYPTION_KEY = '5b'.repeat(32);

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  database: TestDatabase;
  adminKey: string;
  /** `http://127.0.0.1:<port>` when started with `listen`, for real HTTP clients. */
  baseUrl: string;
  request(
    method: string,
    url: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startTestApp(
  env: Record<string, string> = {},
  database?: TestDatabase,
  options: { listen?: boolean } = {},
): Promise<TestApp> {
  const db = database ?? (await createTestDatabase());
  // Spill files and any generated key go to a folder of this app's own, never the working tree.
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-data-'));
  const config = loadConfig({
    DATABASE_URL: db.url,
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
    GATEWAY_JOBS: 'false',
    LOG_LEVEL: process.env.SB_TEST_LOG_LEVEL ?? 'silent',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...env,
  });
  const app = await createApp(config);
  let baseUrl = '';
  if (options.listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  } else {
    await app.getHttpAdapter().getInstance().ready();
  }
  return {
    baseUrl,
    app,
    config,
    database: db,
    adminKey: TEST_ADMIN_KEY,
    async request(method, url, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const key = options.key === undefined ? TEST_ADMIN_KEY : options.key;
      if (key !== null) headers['x-gateway-api-key'] = key;
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(options.body !== undefined ? { payload: options.body as object } : {}),
      });
      let body: unknown = response.body;
      try {
        body = response.json();
      } catch {
        // Not JSON: keep the text.
      }
      return { status: response.statusCode, body, headers: response.headers };
    },
    async close() {
      await app.close();
      if (!database) await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
