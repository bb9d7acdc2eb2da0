import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { TestApp, currentDialect, describeE2E, startTestApp } from '../support/test-app';

describeE2E('foundation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  it('answers liveness and readiness with a trace id', async () => {
    const live = await t.request('GET', '/v1/health', { key: null });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    expect(live.headers['x-gateway-trace-id']).toEqual(expect.any(String));
    const ready = await t.request('GET', '/v1/health/ready', { key: null });
    expect(ready.body).toEqual({ status: 'ok', database: 'up' });
  });

  it('echoes a sent trace id', async () => {
    const response = await t.request('GET', '/v1/health', {
      key: null,
      headers: { 'x-gateway-trace-id': 'trace-123' },
    });
    expect(response.headers['x-gateway-trace-id']).toBe('trace-123');
  });

  it('serves the OpenAPI description generated from the controllers', async () => {
    const response = await t.request('GET', '/v1/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.body.openapi).toMatch(/^3\./);
    for (const path of [
      '/v1/admin/workspaces',
      '/v1/api-keys/{type}/{subType}',
      '/v1/audit-logs',
      '/v1/admin/users/invites',
    ]) {
      expect(Object.keys(response.body.paths)).toContain(path);
    }
  });

  it('first start creates one organisation, owner, default workspace and the admin key', async () => {
    const workspaces = await t.request('GET', '/v1/admin/workspaces');
    expect(workspaces.status).toBe(200);
    expect(workspaces.body.data).toHaveLength(1);
    expect(workspaces.body.data[0]).toMatchObject({ slug: 'default', is_default: 1, status: 'active' });
    const users = await t.request('GET', '/v1/admin/users');
    expect(users.body.data).toHaveLength(1);
    expect(users.body.data[0]).toMatchObject({ role: 'owner', email: 'owner@localhost' });
  });

  it('a second start on the same database creates nothing', async () => {
    const again = await startTestApp({}, t.database);
    try {
      const workspaces = await again.request('GET', '/v1/admin/workspaces');
      expect(workspaces.body.total).toBe(1);
      const users = await again.request('GET', '/v1/admin/users');
      expect(users.body.total).toBe(1);
      const keys = await again.request('GET', '/v1/api-keys');
      expect(keys.body.total).toBe(1);
    } finally {
      await again.app.close();
    }
  });

  it('errors use the OpenAI envelope with the right status', async () => {
    const unknownRoute = await t.request('GET', '/v1/nothing-here');
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.body.error).toEqual({
      message: 'No route for GET /v1/nothing-here',
      type: 'not_found_error',
      param: null,
      code: 'route_not_found',
    });
    const noKey = await t.request('GET', '/v1/admin/users', { key: null });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.code).toBe('missing_api_key');
    const badJson = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/workspaces',
      headers: { 'x-gateway-api-key': t.adminKey, 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error.code).toBe('invalid_json');
  });

  it('validation errors name the field and the rule', async () => {
    const unknownField = await t.request('POST', '/v1/admin/workspaces', {
      body: { name: 'X', colour: 'red' },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error).toMatchObject({ param: 'colour', code: 'invalid_request' });
    const tooLong = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'n'.repeat(256) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.param).toBe('name');
    expect(tooLong.body.error.message).toMatch(/maxLength/);
    const nested = await t.request('POST', '/v1/admin/workspaces', {
      body: {
        name: 'Y',
        usage_limits: [{ credit_limit: 10, periodic_reset: 'weekly', periodic_reset_days: 7 }],
      },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.param).toBe('usage_limits[0].periodic_reset_days');
    const badPage = await t.request('GET', '/v1/admin/workspaces?page_size=-1');
    expect(badPage.status).toBe(400);
    expect(badPage.body.error.param).toBe('page_size');
  });

  it('the raw value of a created key appears nowhere in the database', async () => {
    const created = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'secret holder', workspace_id: 'default', scopes: ['completions.write'] },
    });
    expect(created.status).toBe(200);
    const raw: string = created.body.key;
    expect(raw).toMatch(/^sb-/);
    const listed = await t.request('GET', '/v1/api-keys');
    expect(JSON.stringify(listed.body)).not.toContain(raw);
    await new Promise((resolve) => setTimeout(resolve, 700)); // let the audit batch land too
    if (currentDialect() === 'sqlite') {
      const path = t.config.database.kind === 'sqlite' ? t.config.database.path : '';
      for (const file of [path, `${path}-wal`]) {
        let bytes = Buffer.alloc(0);
        try {
          bytes = readFileSync(file);
        } catch {
          continue;
        }
        expect(bytes.includes(Buffer.from(raw))).toBe(false);
        expect(bytes.includes(Buffer.from(t.adminKey))).toBe(false);
      }
    } else {
      const client = new Client({
        connectionString: t.config.database.kind === 'postgres' ? t.config.database.url : '',
      });
      await client.connect();
      const tables = await client.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
      );
      for (const { table_name } of tables.rows) {
        const rows = await client.query(`SELECT * FROM "${table_name}"`);
        expect(JSON.stringify(rows.rows)).not.toContain(raw);
      }
      await client.end();
    }
  });
});
