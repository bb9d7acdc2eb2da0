import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, sqliteModule } from '@switchboard/database';
import { RequestLogRollupEntity } from './entities/request-log-rollup.entity';
import { RequestLogEntity } from './entities/request-log.entity';
import type { LogRecord } from './log-record';
import { RequestLogRepository } from './request-log.repository';
import { SqliteLogStore } from './sqlite-log-store';
import { SqliteLogThread } from './sqlite-log-thread';

const ORGANISATION = '11111111-1111-4111-8111-111111111111';

function record(overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    id: randomUUID(),
    requestId: randomUUID(),
    traceId: 'trace-store',
    spanId: 'span-1',
    parentSpanId: null,
    spanName: 'chat',
    organisationId: ORGANISATION,
    workspaceId: '22222222-2222-4222-8222-222222222222',
    apiKeyId: null,
    userId: null,
    provider: 'openai',
    providerSlug: null,
    model: 'gpt-4o-mini',
    configId: null,
    promptId: null,
    route: 'chat.completions',
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    isStream: true,
    latencyMs: 42.6,
    ttfbMs: 20.2,
    promptTokens: 3,
    completionTokens: 4,
    totalTokens: 7,
    cachedTokens: 1,
    reasoningTokens: 2,
    cost: 0.000123,
    cacheStatus: 'miss',
    retryCount: 0,
    metadata: { env: 'test', ünï: 'cödé' },
    requestBody: '{"model":"gpt-4o-mini"}',
    responseBody: 'data: {"id":"x"}\n\n',
    errorCode: null,
    errorMessage: null,
    createdAt: new Date('2026-03-04T05:06:07.089Z'),
    ...overrides,
  };
}

describe('SQLite log store (the worker thread’s writes)', () => {
  let dir: string;
  let dataSource: DataSource;
  let repository: RequestLogRepository;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-log-store-'));
    dataSource = new DataSource(
      buildDataSourceOptions({ kind: 'sqlite', path: join(dir, 'logs.db') }, [
        RequestLogEntity,
        RequestLogRollupEntity,
      ]),
    );
    await dataSource.initialize();
    await dataSource.runMigrations();
    repository = new RequestLogRepository(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const rowsOf = (ids: string[]) =>
    dataSource
      .getRepository(RequestLogEntity)
      .find({ where: ids.map((id) => ({ id })), order: { id: 'ASC' } });
  const rollups = (model: string) =>
    dataSource
      .getRepository(RequestLogRollupEntity)
      .find({ where: { model }, order: { granularity: 'ASC' } });

  it('writes rows that read back exactly as the TypeORM path writes them', async () => {
    const db = new (sqliteModule())(repository.sqliteFile!);
    const store = new SqliteLogStore(db, repository.sqlitePlan());
    try {
      const viaStore = record({ model: 'same-store', isStream: true });
      const viaTypeOrm = { ...viaStore, id: randomUUID(), model: 'same-typeorm' };
      expect(store.writeBatch([viaStore])).toBe(1);
      expect(await repository.writeBatch([viaTypeOrm])).toBe(1);
      const [fromStore] = await rowsOf([viaStore.id]);
      const [fromTypeOrm] = await rowsOf([viaTypeOrm.id]);
      expect({ ...fromStore, id: null, model: null }).toEqual({ ...fromTypeOrm, id: null, model: null });
      expect(fromStore.created_at.toISOString()).toBe('2026-03-04T05:06:07.089Z');
      expect(fromStore.metadata).toEqual({ env: 'test', ünï: 'cödé' });
      expect(fromStore.is_stream).toBe(true);
      const [storeHour, storeMinute] = await rollups('same-store');
      const [typeOrmHour, typeOrmMinute] = await rollups('same-typeorm');
      const strip = (row: RequestLogRollupEntity) => ({ ...row, id: null, model: null });
      expect(strip(storeHour)).toEqual(strip(typeOrmHour));
      expect(strip(storeMinute)).toEqual(strip(typeOrmMinute));
    } finally {
      store.close();
    }
  });

  it('is idempotent by log id: a replayed batch adds only the new rows to the rollups', async () => {
    const db = new (sqliteModule())(repository.sqliteFile!);
    const store = new SqliteLogStore(db, repository.sqlitePlan());
    try {
      const model = `replay-${randomUUID()}`;
      const batch = Array.from({ length: 10 }, () => record({ model }));
      expect(store.writeBatch(batch.slice(0, 4))).toBe(4);
      expect(store.writeBatch(batch)).toBe(6);
      expect(store.writeBatch(batch)).toBe(0);
      const counts = (await rollups(model)).map((row) => Number(row.request_count));
      expect(counts).toEqual([10, 10]);
    } finally {
      store.close();
    }
  });

  it('splits a batch into reused power-of-two statements, one transaction per batch', async () => {
    const db = new (sqliteModule())(repository.sqliteFile!);
    const store = new SqliteLogStore(db, repository.sqlitePlan());
    try {
      const model = `chunks-${randomUUID()}`;
      expect(store.writeBatch(Array.from({ length: 125 }, () => record({ model })))).toBe(125);
      // 125 = 64 + 32 + 16 + 8 + 4 + 1 log inserts, and one rollup upsert (2 rows: minute and hour).
      expect(store.preparedStatements).toBe(7);
      expect(store.writeBatch(Array.from({ length: 125 }, () => record({ model })))).toBe(125);
      expect(store.preparedStatements).toBe(7);
      expect(await dataSource.getRepository(RequestLogEntity).countBy({ model })).toBe(250);
    } finally {
      store.close();
    }
  });

  it('rolls the whole batch back when one row is refused', async () => {
    const db = new (sqliteModule())(repository.sqliteFile!);
    const store = new SqliteLogStore(db, repository.sqlitePlan());
    try {
      const model = `refused-${randomUUID()}`;
      const bad = record({ model, organisationId: null as unknown as string });
      expect(() => store.writeBatch([record({ model }), bad])).toThrow(/NOT NULL/);
      expect(await dataSource.getRepository(RequestLogEntity).countBy({ model })).toBe(0);
      expect(await rollups(model)).toEqual([]);
    } finally {
      store.close();
    }
  });

  describe('on its worker thread', () => {
    it('writes, pings, survives the worker dying, and closes', async () => {
      const thread = new SqliteLogThread(repository.sqliteFile!, () => repository.sqlitePlan());
      try {
        const model = `thread-${randomUUID()}`;
        expect(await thread.writeBatch(Array.from({ length: 3 }, () => record({ model })))).toBe(3);
        await expect(thread.ping()).resolves.toBeUndefined();
        expect(await dataSource.getRepository(RequestLogEntity).countBy({ model })).toBe(3);

        // A refused batch rejects with SQLite's message and leaves the worker usable.
        await expect(
          thread.writeBatch([record({ model, organisationId: null as unknown as string })]),
        ).rejects.toThrow(/NOT NULL/);

        // Killed under a write: the call rejects, and the next one starts a new worker.
        const worker = (thread as unknown as { worker: { terminate(): Promise<number> } }).worker;
        const inFlight = thread.writeBatch([record({ model })]);
        await worker.terminate();
        await inFlight.then(
          () => undefined,
          (error: Error) => expect(error.message).toMatch(/exited/),
        );
        expect(await thread.writeBatch([record({ model })])).toBe(1);
      } finally {
        await thread.close();
      }
      await expect(thread.writeBatch([record()])).rejects.toThrow(/closed/);
    });
  });
});
