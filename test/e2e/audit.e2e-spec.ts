import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AuditService } from '@switchboard/audit';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

interface AuditRecord {
  id: string;
  timestamp: string;
  method: string;
  uri: string;
  request_id: string;
  trace_id: string | null;
  request_body: unknown;
  query_params: Record<string, unknown> | null;
  user_id: string | null;
  user_type: string;
  api_key_id: string | null;
  organisation_id: string | null;
  workspace_id: string | null;
  response_status_code: number;
  error_code: string | null;
  resource_type: string;
  resource_id: string | null;
  action: string;
  client_ip: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeE2E('audit', () => {
  let t: TestApp;
  let bootstrapKeyId: string;
  let organisationId: string;
  let sequence = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;

  /** Sends a request under a fresh trace id, so its audit record can be found afterwards. */
  async function traced(method: string, url: string, options: { key?: string | null; body?: unknown } = {}) {
    const traceId = `audit-${randomUUID()}`;
    const response = await t.request(method, url, { ...options, headers: { 'x-gateway-trace-id': traceId } });
    return { ...response, traceId };
  }

  async function records(query = ''): Promise<{ total: number; data: AuditRecord[] }> {
    const response = await t.request('GET', `/v1/audit-logs?page_size=100${query ? `&${query}` : ''}`);
    expect(response.status).toBe(200);
    return response.body;
  }

  async function recordOf(traceId: string): Promise<AuditRecord> {
    const found = (await records()).data.filter((record) => record.trace_id === traceId);
    expect(found).toHaveLength(1);
    return found[0];
  }

  async function onboard(
    workspaces: { id: string; role: 'admin' | 'manager' | 'member' }[],
    role = 'member',
  ) {
    const invite = await t.request('POST', '/v1/admin/users/invites', {
      body: { email: `${unique('p')}@example.test`, role, workspaces },
    });
    const accepted = await t.request('POST', '/v1/invites/accept', {
      key: null,
      body: { token: invite.body.token },
    });
    expect(accepted.status).toBe(200);
    return accepted.body as { user: { id: string }; api_keys: { id: string; key: string; type: string }[] };
  }

  beforeAll(async () => {
    t = await startTestApp();
    const keys = await t.request('GET', '/v1/api-keys');
    bootstrapKeyId = keys.body.data[0].id;
    organisationId = keys.body.data[0].organisation_id;
  });
  afterAll(async () => t?.close());

  it('every administrative create, update and delete is recorded with actor, action, target, method, uri, status, request id and client ip', async () => {
    const steps: { response: Awaited<ReturnType<typeof traced>>; expected: Partial<AuditRecord> }[] = [];
    const step = async (
      method: string,
      url: string,
      body: unknown,
      expected:
        Partial<AuditRecord> | ((response: Awaited<ReturnType<typeof traced>>) => Partial<AuditRecord>),
    ) => {
      const response = await traced(method, url, { body });
      expect(response.status).toBeLessThan(300);
      steps.push({ response, expected: typeof expected === 'function' ? expected(response) : expected });
      return response;
    };

    const workspace = await step('POST', '/v1/admin/workspaces', { name: unique('Audited') }, (r) => ({
      action: 'create',
      resource_type: 'workspace',
      resource_id: r.body.id,
    }));
    const ws = workspace.body.id as string;
    await step(
      'PUT',
      `/v1/admin/workspaces/${ws}`,
      { description: 'changed' },
      {
        action: 'update',
        resource_type: 'workspace',
        resource_id: ws,
      },
    );
    const person = await onboard([]);
    const userId = person.user.id;
    await step(
      'POST',
      `/v1/admin/workspaces/${ws}/users`,
      { users: [{ id: userId, role: 'member' }] },
      {
        action: 'create',
        resource_type: 'workspace_member',
        resource_id: ws,
      },
    );
    await step(
      'PUT',
      `/v1/admin/workspaces/${ws}/users/${userId}`,
      { role: 'manager' },
      {
        action: 'update',
        resource_type: 'workspace_member',
        resource_id: userId,
      },
    );
    await step('DELETE', `/v1/admin/workspaces/${ws}/users/${userId}`, undefined, {
      action: 'delete',
      resource_type: 'workspace_member',
      resource_id: userId,
    });
    await step(
      'PUT',
      '/v1/admin/security-settings',
      { membersViewPrompts: true },
      {
        action: 'update',
        resource_type: 'security_settings',
      },
    );
    await step(
      'PUT',
      `/v1/admin/workspaces/${ws}/security-settings`,
      { membersViewPrompts: false },
      {
        action: 'update',
        resource_type: 'security_settings',
        resource_id: ws,
      },
    );
    const invite = await step(
      'POST',
      '/v1/admin/users/invites',
      { email: `${unique('inv')}@example.test`, role: 'member' },
      (r) => ({ action: 'create', resource_type: 'invite', resource_id: r.body.id }),
    );
    await step('POST', `/v1/admin/users/invites/${invite.body.id}/resend`, undefined, {
      action: 'resend',
      resource_type: 'invite',
      resource_id: invite.body.id,
    });
    await step('DELETE', `/v1/admin/users/invites/${invite.body.id}`, undefined, {
      action: 'delete',
      resource_type: 'invite',
      resource_id: invite.body.id,
    });
    await step(
      'PUT',
      `/v1/admin/users/${userId}`,
      { first_name: 'Audit' },
      {
        action: 'update',
        resource_type: 'user',
        resource_id: userId,
      },
    );
    await step('DELETE', `/v1/admin/users/${userId}`, undefined, {
      action: 'delete',
      resource_type: 'user',
      resource_id: userId,
    });
    const key = await step(
      'POST',
      '/v1/api-keys/workspace/service',
      { name: 'audited key', workspace_id: ws, scopes: [] },
      (r) => ({ action: 'create', resource_type: 'api_key', resource_id: r.body.id }),
    );
    await step(
      'PUT',
      `/v1/api-keys/${key.body.id}`,
      { name: 'renamed' },
      {
        action: 'update',
        resource_type: 'api_key',
        resource_id: key.body.id,
      },
    );
    await step(
      'POST',
      `/v1/api-keys/${key.body.id}/rotate`,
      {},
      {
        action: 'rotate',
        resource_type: 'api_key',
        resource_id: key.body.id,
      },
    );
    await step('DELETE', `/v1/api-keys/${key.body.id}`, undefined, {
      action: 'delete',
      resource_type: 'api_key',
      resource_id: key.body.id,
    });
    await step('DELETE', `/v1/admin/workspaces/${ws}`, undefined, {
      action: 'delete',
      resource_type: 'workspace',
      resource_id: ws,
    });

    const all = (await records()).data;
    const requestIds = new Set<string>();
    for (const { response, expected } of steps) {
      const found = all.filter((record) => record.trace_id === response.traceId);
      expect(found).toHaveLength(1);
      const [record] = found;
      expect(record).toMatchObject({
        resource_id: null,
        ...expected,
        response_status_code: response.status,
        user_type: 'api_key',
        api_key_id: bootstrapKeyId,
        organisation_id: organisationId,
        client_ip: '127.0.0.1',
        error_code: null,
      });
      expect(record.request_id).toMatch(UUID);
      requestIds.add(record.request_id);
      expect(Date.parse(record.timestamp)).toBeLessThanOrEqual(Date.now());
    }
    expect(requestIds.size).toBe(steps.length);
    const methods = steps.map(({ response }) => all.find((r) => r.trace_id === response.traceId)!);
    expect(methods.map((r) => `${r.method} ${r.uri}`)).toEqual([
      'POST /v1/admin/workspaces',
      `PUT /v1/admin/workspaces/${ws}`,
      `POST /v1/admin/workspaces/${ws}/users`,
      `PUT /v1/admin/workspaces/${ws}/users/${userId}`,
      `DELETE /v1/admin/workspaces/${ws}/users/${userId}`,
      'PUT /v1/admin/security-settings',
      `PUT /v1/admin/workspaces/${ws}/security-settings`,
      'POST /v1/admin/users/invites',
      `POST /v1/admin/users/invites/${invite.body.id}/resend`,
      `DELETE /v1/admin/users/invites/${invite.body.id}`,
      `PUT /v1/admin/users/${userId}`,
      `DELETE /v1/admin/users/${userId}`,
      'POST /v1/api-keys/workspace/service',
      `PUT /v1/api-keys/${key.body.id}`,
      `POST /v1/api-keys/${key.body.id}/rotate`,
      `DELETE /v1/api-keys/${key.body.id}`,
      `DELETE /v1/admin/workspaces/${ws}`,
    ]);
    // Reads are not administrative actions.
    expect(all.some((record) => record.uri.startsWith('/v1/audit-logs'))).toBe(false);
  });

  it("a user key's actions name the user", async () => {
    const admin = await onboard([], 'admin');
    const key = admin.api_keys.find((item) => item.type === 'organisation-user')!;
    const response = await traced('POST', '/v1/admin/workspaces', {
      key: key.key,
      body: { name: unique('ByUser') },
    });
    expect(response.status).toBe(200);
    expect(await recordOf(response.traceId)).toMatchObject({
      user_type: 'user',
      user_id: admin.user.id,
      api_key_id: key.id,
      resource_id: response.body.id,
    });
  });

  it('an accepted invite is recorded as the new user, in their organisation; a refused token is not', async () => {
    const invite = await t.request('POST', '/v1/admin/users/invites', {
      body: { email: `${unique('acc')}@example.test`, role: 'member' },
    });
    expect(invite.status).toBe(200);
    const accepted = await traced('POST', '/v1/invites/accept', {
      key: null,
      body: { token: invite.body.token },
    });
    expect(accepted.status).toBe(200);
    expect(await recordOf(accepted.traceId)).toMatchObject({
      action: 'accept',
      resource_type: 'invite',
      resource_id: invite.body.id,
      user_type: 'user',
      user_id: accepted.body.user.id,
      api_key_id: null,
      organisation_id: organisationId,
      method: 'POST',
      uri: '/v1/invites/accept',
      response_status_code: 200,
    });
    const again = await traced('POST', '/v1/invites/accept', {
      key: null,
      body: { token: invite.body.token },
    });
    expect(again.status).toBe(409);
    expect((await records()).data.filter((record) => record.trace_id === again.traceId)).toHaveLength(0);
  });

  it('refused actions are recorded with their status and reason: 400, 403, 404, 409', async () => {
    const workspace = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique('Refusals') } });
    const manager = await onboard([{ id: workspace.body.id, role: 'manager' }]);
    const managerKey = manager.api_keys[0];

    const forbidden = await traced('POST', '/v1/admin/workspaces', {
      key: managerKey.key,
      body: { name: 'x' },
    });
    expect(forbidden.status).toBe(403);
    expect(await recordOf(forbidden.traceId)).toMatchObject({
      response_status_code: 403,
      error_code: 'permission_denied',
      action: 'create',
      resource_type: 'workspace',
      user_type: 'user',
      user_id: manager.user.id,
      api_key_id: managerKey.id,
      workspace_id: workspace.body.id,
    });
    const notGrantable = await traced(
      'PUT',
      `/v1/admin/workspaces/${workspace.body.id}/users/${manager.user.id}`,
      {
        key: managerKey.key,
        body: { role: 'admin' },
      },
    );
    expect(notGrantable.status).toBe(403);
    expect((await recordOf(notGrantable.traceId)).error_code).toBe('role_not_grantable');

    const invalid = await traced('POST', '/v1/admin/workspaces', { body: { name: 'x', colour: 'red' } });
    expect(invalid.status).toBe(400);
    expect(await recordOf(invalid.traceId)).toMatchObject({
      response_status_code: 400,
      error_code: 'invalid_request',
    });
    const missing = await traced('DELETE', '/v1/api-keys/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(await recordOf(missing.traceId)).toMatchObject({
      response_status_code: 404,
      resource_type: 'api_key',
      resource_id: '00000000-0000-4000-8000-000000000000',
    });
    const conflict = await traced('POST', '/v1/admin/workspaces', {
      body: { name: 'dup', slug: workspace.body.slug },
    });
    expect(conflict.status).toBe(409);
    expect((await recordOf(conflict.traceId)).error_code).toBe('slug_taken');
  });

  it('authentication errors are recorded: an expired or archived key by its id, a wrong key anonymously', async () => {
    const workspace = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique('Expiring') } });
    const expiring = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'soon', workspace_id: workspace.body.id, scopes: [] },
    });
    // Expiry moved into the past in the row itself; the key has not been used, so nothing is cached.
    await t.app
      .get(DataSource)
      .getRepository('ApiKeyEntity')
      .update({ id: expiring.body.id }, { expires_at: new Date(Date.now() - 1000) });
    const expired = await traced('POST', '/v1/admin/workspaces', {
      key: expiring.body.key,
      body: { name: 'x' },
    });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('expired_api_key');
    expect(await recordOf(expired.traceId)).toMatchObject({
      response_status_code: 401,
      error_code: 'expired_api_key',
      user_type: 'api_key',
      api_key_id: expiring.body.id,
      organisation_id: organisationId,
      action: 'create',
      resource_type: 'workspace',
    });

    const archivedKey = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'archived', workspace_id: workspace.body.id, scopes: [] },
    });
    await t.request('DELETE', `/v1/admin/workspaces/${workspace.body.id}`);
    const archived = await traced('DELETE', `/v1/api-keys/${archivedKey.body.id}`, {
      key: archivedKey.body.key,
    });
    expect(archived.status).toBe(401);
    expect(await recordOf(archived.traceId)).toMatchObject({
      error_code: 'workspace_archived',
      api_key_id: archivedKey.body.id,
      resource_id: archivedKey.body.id,
    });

    // A key nobody issued belongs to no organisation: it is recorded, but in no organisation's list.
    const wrong = await traced('POST', '/v1/admin/workspaces', {
      key: 'sb-not-a-real-key',
      body: { name: 'x' },
    });
    expect(wrong.status).toBe(401);
    await t.app.get(AuditService).flush();
    const stored = await t.app
      .get(DataSource)
      .getRepository('AuditLogEntity')
      .findOneBy({ trace_id: wrong.traceId });
    expect(stored).toMatchObject({
      actor_type: 'anonymous',
      api_key_id: null,
      organisation_id: null,
      error_code: 'invalid_api_key',
      response_status_code: 401,
    });
    expect((await records()).data.some((record) => record.trace_id === wrong.traceId)).toBe(false);
  });

  it('audit logs filter by method, resource type, action, status, user type and time window, and page', async () => {
    const start = new Date(Date.now() - 1000).toISOString();
    const created = await traced('POST', '/v1/api-keys/organisation/service', {
      body: { name: 'f', scopes: [] },
    });
    const updated = await traced('PUT', `/v1/api-keys/${created.body.id}`, { body: { name: 'g' } });
    const refused = await traced('PUT', `/v1/api-keys/${created.body.id}`, { body: { name: '' } });
    const deleted = await traced('DELETE', `/v1/api-keys/${created.body.id}`);
    const mine = [created, updated, refused, deleted].map((response) => response.traceId);
    const traces = async (query: string) =>
      (await records(`start_time=${encodeURIComponent(start)}&${query}`)).data
        .map((record) => record.trace_id)
        .filter((trace) => mine.includes(trace!));

    expect(await traces('method=PUT')).toEqual(expect.arrayContaining([updated.traceId, refused.traceId]));
    expect(await traces('method=PUT')).toHaveLength(2);
    expect(await traces('method=DELETE&resource_type=api_key')).toEqual([deleted.traceId]);
    expect(await traces('action=create&resource_type=api_key')).toEqual([created.traceId]);
    expect(await traces('resource_type=workspace')).toEqual([]);
    expect(await traces('response_status_code=400')).toEqual([refused.traceId]);
    expect(await traces('response_status_code=200&resource_type=api_key')).toHaveLength(3);
    expect(await traces('user_type=api_key')).toHaveLength(4);
    expect(await traces('user_type=user')).toEqual([]);
    expect(await traces(`uri=${encodeURIComponent(`/v1/api-keys/${created.body.id}`)}`)).toHaveLength(3);
    const byRequest = await recordOf(deleted.traceId);
    expect((await records(`request_id=${byRequest.request_id}`)).data.map((r) => r.id)).toEqual([
      byRequest.id,
    ]);

    const past = new Date(Date.parse(start) - 60_000).toISOString();
    expect(await traces(`end_time=${encodeURIComponent(past)}`)).toEqual([]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await records(`start_time=${encodeURIComponent(future)}`)).total).toBe(0);

    const all = await records();
    for (const query of ['page_size=2&current_page=1', 'pageSize=2&currentPage=1']) {
      const page = await t.request('GET', `/v1/audit-logs?${query}`);
      expect(page.body.total).toBe(all.total);
      expect(page.body.data.map((record: AuditRecord) => record.id)).toEqual(
        all.data.slice(2, 4).map((r) => r.id),
      );
    }
    for (const bad of ['method=GET', 'response_status_code=42', 'start_time=yesterday', 'user_type=robot']) {
      expect((await t.request('GET', `/v1/audit-logs?${bad}`)).status).toBe(400);
    }
  });

  it('only owners, admins and admin keys can read audit logs (workspace keys and members get 403)', async () => {
    const workspace = await t.request('POST', '/v1/admin/workspaces', { body: { name: unique('Readers') } });
    const admin = await onboard([{ id: workspace.body.id, role: 'admin' }], 'admin');
    const adminKey = admin.api_keys.find((key) => key.type === 'organisation-user')!;
    expect((await t.request('GET', '/v1/audit-logs', { key: adminKey.key })).status).toBe(200);
    const manager = await onboard([{ id: workspace.body.id, role: 'manager' }]);
    const service = await t.request('POST', '/v1/api-keys/workspace/service', {
      body: { name: 'reader', workspace_id: workspace.body.id, scopes: ['logs.list', 'logs.view'] },
    });
    for (const key of [
      manager.api_keys[0].key,
      service.body.key,
      admin.api_keys.find((k) => k.type === 'workspace-user')!.key,
    ]) {
      const refused = await t.request('GET', '/v1/audit-logs', { key });
      expect(refused.status).toBe(403);
    }
    expect((await t.request('GET', '/v1/audit-logs', { key: null })).status).toBe(401);
  });

  it('secrets in request bodies and query strings never reach the audit trail', async () => {
    const secret = `sk-live-${randomUUID()}`;
    const response = await traced('POST', '/v1/admin/workspaces', {
      body: {
        name: unique('Secrets'),
        defaults: {
          metadata: { openai_api_key: secret, password: secret, client_secret: secret, team: 'core' },
        },
      },
    });
    expect(response.status).toBe(200);
    const record = await recordOf(response.traceId);
    expect(record.request_body).toMatchObject({
      defaults: {
        metadata: {
          openai_api_key: '[redacted]',
          password: '[redacted]',
          client_secret: '[redacted]',
          team: 'core',
        },
      },
    });
    const withQuery = await traced('DELETE', `/v1/api-keys/${randomUUID()}?token=${secret}`);
    expect(withQuery.status).toBe(404);
    expect((await recordOf(withQuery.traceId)).query_params).toEqual({ token: '[redacted]' });
    const everything = JSON.stringify(await t.app.get(DataSource).getRepository('AuditLogEntity').find());
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(t.adminKey);
  });

  it('writing audit records never fails the action: with the audit table gone the action succeeds, and its record lands once the table is back', async () => {
    const dataSource = t.app.get(DataSource);
    const audit = t.app.get(AuditService);
    await audit.flush();
    await dataSource.query('ALTER TABLE audit_logs RENAME TO audit_logs_away');
    let response: Awaited<ReturnType<typeof traced>>;
    try {
      response = await traced('POST', '/v1/admin/workspaces', { body: { name: unique('Resilient') } });
      expect(response.status).toBe(200);
      await audit.flush(); // fails inside and keeps the batch
      const stillThere = await t.request('GET', `/v1/admin/workspaces/${response.body.id}`);
      expect(stillThere.status).toBe(200);
    } finally {
      await dataSource.query('ALTER TABLE audit_logs_away RENAME TO audit_logs');
    }
    await audit.flush();
    const stored = await dataSource.getRepository('AuditLogEntity').findBy({ trace_id: response.traceId });
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ resource_id: response.body.id, response_status_code: 200 });
  });
});
