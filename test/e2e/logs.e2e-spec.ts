import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ConfigModule, loadConfig } from '../../libs/config/src';
import { DatabaseModule } from '../../libs/database/src';
import { RequestLogRollupEntity } from '../../libs/observability/src/entities/request-log-rollup.entity';
import { RequestLogEntity } from '../../libs/observability/src/entities/request-log.entity';
import type { LogRecord } from '../../libs/observability/src/log-record';
import { LOG_WRITER_OPTIONS, LogWriter, LogWriterOptions } from '../../libs/observability/src/log-writer';
import { RequestLogRepository } from '../../libs/observability/src/request-log.repository';
import { TestApp, TestDatabase, createTestDatabase, describeE2E, startTestApp } from '../support/test-app';

const ORGANISATION = '11111111-1111-4111-8111-111111111111';
const WORKSPACE = '22222222-2222-4222-8222-222222222222';

function logRecord(overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    id: randomUUID(),
    requestId: randomUUID(),
    traceId: 'trace-writer',
    spanId: null,
    parentSpanId: null,
    spanName: null,
    organisationId: ORGANISATION,
    workspaceId: WORKSPACE,
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
    isStream: false,
    latencyMs: 42.7,
    ttfbMs: 20,
    promptTokens: 3,
    completionTokens: 4,
    totalTokens: 7,
    cachedTokens: 0,
    reasoningTokens: 0,
    cost: 0.0001,
    cacheStatus: 'miss',
    retryCount: 0,
    metadata: { env: 'test' },
    requestBody: '{"model":"gpt-4o-mini"}',
    responseBody: '{"id":"chatcmpl"}',
    errorCode: null,
    errorMessage: null,
    createdAt: new Date(),
    ...overrides,
  };
}

/** The real repository, with a switch that makes the database look down (writes and pings fail). */
@Injectable()
class SwitchableRepository extends RequestLogRepository {
  down = false;
  override async writeBatch(records: readonly LogRecord[]): Promise<number> {
    if (this.down) throw new Error('connection refused (test outage)');
    return super.writeBatch(records);
  }
  override async ping(): Promise<void> {
    if (this.down) throw new Error('connection refused (test outage)');
    return super.ping();
  }
}

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeE2E('log writer against a real database', () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-logs-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  async function open(options: Partial<LogWriterOptions> = {}): Promise<TestingModule> {
    const config = loadConfig({ DATABASE_URL: database.url, GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const module = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        TypeOrmModule.forFeature([RequestLogEntity, RequestLogRollupEntity]),
      ],
      providers: [
        RequestLogRepository,
        LogWriter,
        {
          provide: LOG_WRITER_OPTIONS,
          useValue: {
            batchSize: 500,
            flushIntervalMs: 60_000,
            maxQueue: 10_000,
            spillDirectory: join(dataDir, 'log-spill'),
            ...options,
          } satisfies LogWriterOptions,
        },
      ],
    })
      .overrideProvider(RequestLogRepository)
      .useClass(SwitchableRepository)
      .compile();
    module.enableShutdownHooks();
    await module.init();
    return module;
  }

  async function countLogs(module: TestingModule, traceId: string): Promise<number> {
    return module.get(DataSource).getRepository(RequestLogEntity).countBy({ trace_id: traceId });
  }

  async function rollupCount(module: TestingModule, granularity: 'minute' | 'hour', traceModel: string) {
    const rows = await module
      .get(DataSource)
      .getRepository(RequestLogRollupEntity)
      .findBy({ granularity, model: traceModel });
    return rows.reduce((sum, row) => sum + Number(row.request_count), 0);
  }

  const spillFiles = () => {
    try {
      return readdirSync(join(dataDir, 'log-spill')).filter((name) => name.startsWith('logs-'));
    } catch {
      return [];
    }
  };

  it('writes N queued records with one multi-row insert and one rollup upsert', async () => {
    const module = await open();
    try {
      const query = jest.spyOn(EntityManager.prototype, 'query');
      const writer = module.get(LogWriter);
      const model = `batch-${randomUUID()}`;
      for (let index = 0; index < 300; index++) {
        writer.enqueue(logRecord({ traceId: 'trace-batch', model, latencyMs: index % 2 ? 30 : 700 }));
      }
      expect(await countLogs(module, 'trace-batch')).toBe(0);
      await writer.flush();
      const statements = query.mock.calls.map(([sql]) => String(sql));
      query.mockRestore();
      expect(statements.filter((sql) => sql.startsWith('INSERT INTO "request_logs"'))).toHaveLength(1);
      expect(statements.filter((sql) => sql.startsWith('INSERT INTO "request_log_rollups"'))).toHaveLength(1);
      expect(await countLogs(module, 'trace-batch')).toBe(300);
      expect(await rollupCount(module, 'minute', model)).toBe(300);
      expect(await rollupCount(module, 'hour', model)).toBe(300);
      const [hour] = await module
        .get(DataSource)
        .getRepository(RequestLogRollupEntity)
        .findBy({ granularity: 'hour', model });
      expect(Number(hour.latency_le_50)).toBe(150);
      expect(Number(hour.latency_le_1000)).toBe(150);
      expect(Number(hour.total_tokens)).toBe(2100);
      expect(Number(hour.cost)).toBeCloseTo(0.03, 8);
    } finally {
      await module.close();
    }
  });

  it('a full batch is written without waiting for the timer', async () => {
    const module = await open({ batchSize: 50 });
    try {
      const writer = module.get(LogWriter);
      for (let index = 0; index < 120; index++) writer.enqueue(logRecord({ traceId: 'trace-size' }));
      await until(async () => (await countLogs(module, 'trace-size')) >= 100);
      expect(writer.pending).toBeLessThan(50);
    } finally {
      await module.close();
    }
  });

  it('adds later batches to the same rollup rows', async () => {
    const module = await open();
    try {
      const writer = module.get(LogWriter);
      const model = `sum-${randomUUID()}`;
      const createdAt = new Date();
      for (let round = 0; round < 3; round++) {
        for (let index = 0; index < 10; index++) writer.enqueue(logRecord({ model, createdAt }));
        await writer.flush();
      }
      const rows = await module
        .get(DataSource)
        .getRepository(RequestLogRollupEntity)
        .findBy({ granularity: 'minute', model });
      expect(rows).toHaveLength(1);
      expect(Number(rows[0].request_count)).toBe(30);
    } finally {
      await module.close();
    }
  });

  it('flushes what is queued at shutdown', async () => {
    const module = await open();
    module.get(LogWriter).enqueue(logRecord({ traceId: 'trace-shutdown' }));
    for (let index = 0; index < 76; index++)
      module.get(LogWriter).enqueue(logRecord({ traceId: 'trace-shutdown' }));
    await module.close();
    const again = await open();
    try {
      expect(await countLogs(again, 'trace-shutdown')).toBe(77);
      expect(spillFiles()).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it('spills past the queue bound while the database is down, then replays everything once it is back', async () => {
    const module = await open({ batchSize: 50, maxQueue: 100, flushIntervalMs: 20 });
    try {
      const writer = module.get(LogWriter);
      const repository = module.get(RequestLogRepository) as SwitchableRepository;
      const model = `spill-${randomUUID()}`;
      repository.down = true;
      for (let index = 0; index < 400; index++) writer.enqueue(logRecord({ traceId: 'trace-spill', model }));
      const spilledLines = () =>
        spillFiles()
          .map((name) => readFileSync(join(dataDir, 'log-spill', name), 'utf8').split('\n').length - 1)
          .reduce((a, b) => a + b, 0);
      // The bound is 100: the newest records past half of it go to disk, the rest wait in memory.
      await until(() => spilledLines() >= 300);
      expect(writer.pending).toBeLessThanOrEqual(100);
      expect(writer.pending + spilledLines()).toBe(400);
      expect(await countLogs(module, 'trace-spill')).toBe(0);

      repository.down = false;
      await until(async () => (await countLogs(module, 'trace-spill')) === 400 && spillFiles().length === 0);
      expect(await rollupCount(module, 'minute', model)).toBe(400);
      expect(await rollupCount(module, 'hour', model)).toBe(400);
    } finally {
      await module.close();
    }
  });

  it('bounds the queue by bytes too: large bodies spill long before the record count bound', async () => {
    // Records of about 9 KB (two 4 KB bodies): a 90 KB bound holds about 10 of them, not 10,000.
    const module = await open({
      batchSize: 50,
      maxQueue: 10_000,
      maxQueueBytes: 90 * 1024,
      flushIntervalMs: 20,
    });
    try {
      const writer = module.get(LogWriter);
      const repository = module.get(RequestLogRepository) as SwitchableRepository;
      const body = 'x'.repeat(4096);
      repository.down = true;
      for (let index = 0; index < 200; index++)
        writer.enqueue(logRecord({ traceId: 'trace-bytes', requestBody: body, responseBody: body }));
      const spilledLines = () =>
        spillFiles()
          .map((name) => readFileSync(join(dataDir, 'log-spill', name), 'utf8').split('\n').length - 1)
          .reduce((a, b) => a + b, 0);
      await until(() => writer.pending + spilledLines() === 200 && writer.pending <= 10);
      expect(writer.pending).toBeGreaterThan(0);

      repository.down = false;
      await until(async () => (await countLogs(module, 'trace-bytes')) === 200 && spillFiles().length === 0);
    } finally {
      await module.close();
    }
  });

  it('spills at shutdown when the database is down, and the next start replays without double counting', async () => {
    const first = await open();
    const model = `restart-${randomUUID()}`;
    const records = Array.from({ length: 25 }, () => logRecord({ traceId: 'trace-restart', model }));
    // Five were already stored before the outage: the replay must skip them, not count them twice.
    await first.get(RequestLogRepository).writeBatch(records.slice(0, 5));
    (first.get(RequestLogRepository) as SwitchableRepository).down = true;
    for (const record of records) first.get(LogWriter).enqueue(record);
    await first.close();
    expect(spillFiles()).toHaveLength(1);
    expect(spillFiles()[0]).toMatch(/\.closed$/);

    const second = await open({ flushIntervalMs: 20 });
    try {
      await until(async () => (await countLogs(second, 'trace-restart')) === 25 && spillFiles().length === 0);
      expect(await rollupCount(second, 'minute', model)).toBe(25);
    } finally {
      await second.close();
    }
  });

  it('keeps records queued while the data source is closed and writes them once it reopens', async () => {
    const module = await open();
    try {
      const writer = module.get(LogWriter);
      const dataSource = module.get(DataSource);
      await dataSource.destroy();
      for (let index = 0; index < 10; index++) writer.enqueue(logRecord({ traceId: 'trace-closed' }));
      await writer.flush();
      expect(writer.pending).toBe(10);
      await dataSource.initialize();
      await writer.flush();
      expect(writer.pending).toBe(0);
      expect(await countLogs(module, 'trace-closed')).toBe(10);
    } finally {
      await module.close();
    }
  });
});

describeE2E('logs API', () => {
  let t: TestApp;
  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-logs-api-'));
    t = await startTestApp({ GATEWAY_DATA_DIR: dataDir });
  });
  afterAll(async () => t?.close());

  const customLog = (overrides: Record<string, unknown> = {}) => ({
    request: { url: 'https://api.openai.com/v1/chat/completions', method: 'POST', body: { model: 'gpt-4o' } },
    response: {
      status: 200,
      body: { id: 'chatcmpl-1', usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } },
      response_time: 321,
    },
    metadata: { trace_id: unique('trace'), env: 'staging' },
    ...overrides,
  });

  async function createWorkspace(): Promise<string> {
    const created = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique('Logs') } });
    expect(created.status).toBe(200);
    return created.body.id;
  }

  async function workspaceKey(workspaceId: string): Promise<string> {
    const created = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: {
        name: unique('logs key'),
        workspace_id: workspaceId,
        scopes: ['logs.write', 'logs.view', 'logs.list'],
      },
    });
    expect(created.status).toBe(200);
    return created.body.key;
  }

  async function member(workspaceId: string, role: 'member' | 'manager'): Promise<string> {
    const invited = await t.request('POST', '/v1/admin/users/invites', {
      body: {
        email: `${unique('person')}@example.test`,
        role: 'member',
        workspaces: [{ id: workspaceId, role }],
        workspace_api_key_details: { scopes: ['logs.write', 'logs.view', 'logs.list'] },
      },
    });
    expect(invited.status).toBe(200);
    const accepted = await t.request('POST', '/v1/invites/accept', {
      key: null,
      body: { token: invited.body.token },
    });
    expect(accepted.status).toBe(200);
    const key = (accepted.body.api_keys as { type: string; workspace_id: string; key: string }[]).find(
      (candidate) => candidate.type === 'workspace-user' && candidate.workspace_id === workspaceId,
    );
    expect(key).toBeDefined();
    return key!.key;
  }

  it('inserts one custom log and returns it by id in the reference shape', async () => {
    const body = customLog();
    const inserted = await t.request('POST', '/v1/logs', { body });
    expect(inserted.status).toBe(200);
    expect(inserted.body).toEqual({ status: 'success', log_ids: [expect.any(String)] });
    const [id] = inserted.body.log_ids;
    const log = await t.request('GET', `/v1/logs/${id}`);
    expect(log.status).toBe(200);
    expect(log.body).toMatchObject({
      object: 'log',
      id,
      _id: id,
      request: { url: body.request.url, method: 'POST', body: { model: 'gpt-4o' } },
      response: { status: 200, responseTime: 321, body: body.response.body },
      metrics: {
        trace_id: body.metadata.trace_id,
        ai_model: 'gpt-4o',
        req_units: 11,
        res_units: 7,
        total_units: 18,
        metadata: { env: 'staging' },
        is_success: true,
      },
    });
  });

  it('inserts an array of custom logs', async () => {
    const traceId = unique('trace');
    const inserted = await t.request('POST', '/v1/logs', {
      body: [customLog({ metadata: { trace_id: traceId } }), customLog({ metadata: { trace_id: traceId } })],
    });
    expect(inserted.status).toBe(200);
    expect(inserted.body.log_ids).toHaveLength(2);
    const listed = await t.request('GET', `/v1/logs?trace_id=${traceId}`);
    expect(listed.body.total).toBe(2);
  });

  it('validation errors name the field, also inside an array', async () => {
    const noUrl = await t.request('POST', '/v1/logs', {
      body: { request: { body: {} }, response: { body: {} } },
    });
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.error.param).toBe('request.url');
    const second = await t.request('POST', '/v1/logs', {
      body: [customLog(), { request: { url: 'x', body: {} }, response: { status: 42, body: {} } }],
    });
    expect(second.status).toBe(400);
    expect(second.body.error.param).toBe('[1].response.status');
    const unknown = await t.request('POST', '/v1/logs', { body: { ...customLog(), extra: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe('extra');
    const badMetadata = await t.request('POST', '/v1/logs', { body: customLog({ metadata: { n: 1 } }) });
    expect(badMetadata.status).toBe(400);
    expect(badMetadata.body.error.param).toBe('metadata');
  });

  it('an unknown log id is a 404', async () => {
    const missing = await t.request('GET', `/v1/logs/${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('log_not_found');
    expect((await t.request('GET', '/v1/logs/not-a-uuid')).status).toBe(404);
  });

  it('lists with filters on status, model, metadata and paging', async () => {
    const run = unique('run');
    await t.request('POST', '/v1/logs', {
      body: [
        customLog({ metadata: { run, tier: 'gold' } }),
        customLog({ metadata: { run, tier: 'silver' } }),
        customLog({
          metadata: { run, tier: 'gold' },
          request: { url: 'https://x.test/v1/chat/completions', body: { model: 'claude' } },
          response: { status: 429, body: { error: 'slow down' } },
        }),
      ],
    });
    const byRun = encodeURIComponent(JSON.stringify({ run }));
    const all = await t.request('GET', `/v1/logs?metadata=${byRun}`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.data[0].request.body).toBeUndefined();
    const gold = await t.request(
      'GET',
      `/v1/logs?metadata=${encodeURIComponent(JSON.stringify({ run, tier: 'gold' }))}`,
    );
    expect(gold.body.total).toBe(2);
    const limited = await t.request('GET', `/v1/logs?metadata=${byRun}&status_code=429`);
    expect(limited.body.total).toBe(1);
    expect(limited.body.data[0].metrics.ai_model).toBe('claude');
    const model = await t.request('GET', `/v1/logs?metadata=${byRun}&model=gpt-4o`);
    expect(model.body.total).toBe(2);
    const page = await t.request('GET', `/v1/logs?metadata=${byRun}&page_size=2&current_page=1`);
    expect(page.body.total).toBe(3);
    expect(page.body.data).toHaveLength(1);
    const past = await t.request('GET', `/v1/logs?metadata=${byRun}&end_time=2000-01-01T00:00:00Z`);
    expect(past.body.total).toBe(0);
    const bad = await t.request('GET', '/v1/logs?metadata=notjson');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('metadata');
  });

  it("a workspace key cannot read another workspace's logs", async () => {
    const [first, second] = [await createWorkspace(), await createWorkspace()];
    const [firstKey, secondKey] = [await workspaceKey(first), await workspaceKey(second)];
    const inserted = await t.request('POST', '/v1/logs', { key: firstKey, body: customLog() });
    expect(inserted.status).toBe(200);
    const id = inserted.body.log_ids[0];
    expect((await t.request('GET', `/v1/logs/${id}`, { key: firstKey })).status).toBe(200);
    expect((await t.request('GET', `/v1/logs/${id}`)).body.workspace_id).toBe(first);
    const other = await t.request('GET', `/v1/logs/${id}`, { key: secondKey });
    expect(other.status).toBe(404);
    const list = await t.request('GET', `/v1/logs?workspace_id=${first}`, { key: secondKey });
    expect(list.body.total).toBe(0);
    const own = await t.request('GET', '/v1/logs', { key: firstKey });
    expect(own.body.data.map((log: { id: string }) => log.id)).toContain(id);
  });

  it('with membersViewAllData off, members see only their own keys’ logs; managers keep their setting', async () => {
    const workspace = await createWorkspace();
    const [alice, bob, manager] = [
      await member(workspace, 'member'),
      await member(workspace, 'member'),
      await member(workspace, 'manager'),
    ];
    const inserted = await t.request('POST', '/v1/logs', { key: alice, body: customLog() });
    expect(inserted.status).toBe(200);
    const id = inserted.body.log_ids[0];
    expect((await t.request('GET', `/v1/logs/${id}`, { key: bob })).status).toBe(200);

    const settings = await t.request('PUT', `/v1/admin/workspaces/${workspace}/security-settings`, {
      body: { membersViewAllData: false },
    });
    expect(settings.status).toBe(200);
    expect((await t.request('GET', `/v1/logs/${id}`, { key: bob })).status).toBe(404);
    expect((await t.request('GET', '/v1/logs', { key: bob })).body.total).toBe(0);
    expect((await t.request('GET', `/v1/logs/${id}`, { key: alice })).status).toBe(200);
    expect((await t.request('GET', '/v1/logs', { key: alice })).body.total).toBe(1);
    expect((await t.request('GET', `/v1/logs/${id}`, { key: manager })).status).toBe(200);

    await t.request('PUT', `/v1/admin/workspaces/${workspace}/security-settings`, {
      body: { managersViewAllData: false },
    });
    expect((await t.request('GET', `/v1/logs/${id}`, { key: manager })).status).toBe(404);
    expect((await t.request('GET', `/v1/logs/${id}`)).status).toBe(200);
  });

  it('records POST /logs in the audit trail', async () => {
    await t.request('POST', '/v1/logs', { body: customLog() });
    await new Promise((resolve) => setTimeout(resolve, 700));
    const audit = await t.request('GET', '/v1/audit-logs?resource_type=log');
    expect(audit.status).toBe(200);
    expect(audit.body.total).toBeGreaterThan(0);
    expect(audit.body.data[0]).toMatchObject({ resource_type: 'log', action: 'create', method: 'POST' });
  });
});
