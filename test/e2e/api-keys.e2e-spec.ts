import { DataSource } from 'typeorm';
import { KEY_CAPABILITIES } from '@switchboard/access';
import { ApiKeyExpiryJob } from '@switchboard/api-keys';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

interface IssuedKey {
  id: string;
  key: string;
  type: string;
  workspace_id: string | null;
}

interface Person {
  id: string;
  email: string;
  keys: IssuedKey[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Short enough to watch a rotation's transition end inside a test. */
const TRANSITION_MS = 1200;
const MASKED = /^sb-.{4}\*{8}.{4}$/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until the wall clock is past `iso` (plus a small margin), no longer. */
const waitUntilPast = (iso: string) => sleep(Math.max(0, Date.parse(iso) - Date.now() + 50));

describeE2E('api keys', () => {
  let t: TestApp;
  let ownerId: string;
  let sequence = 0;

  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;
  const keysTable = () => t.app.get(DataSource).getRepository('ApiKeyEntity');

  async function onboard(
    options: {
      role?: 'admin' | 'member';
      workspaces?: { id: string; role: 'admin' | 'manager' | 'member' }[];
      scopes?: string[];
    } = {},
  ): Promise<Person> {
    const email = `${unique('person')}@example.test`;
    const created = await t.request('POST', '/v1/admin/users/invites', {
      body: {
        email,
        role: options.role ?? 'member',
        ...(options.workspaces ? { workspaces: options.workspaces } : {}),
        ...(options.scopes ? { workspace_api_key_details: { scopes: options.scopes } } : {}),
      },
    });
    expect(created.status).toBe(200);
    const accepted = await t.request('POST', '/v1/invites/accept', {
      key: null,
      body: { token: created.body.token },
    });
    expect(accepted.status).toBe(200);
    return { id: accepted.body.user.id, email, keys: accepted.body.api_keys };
  }

  const workspaceKey = (person: Person, workspaceId: string) =>
    person.keys.find((key) => key.type === 'workspace-user' && key.workspace_id === workspaceId)!;

  async function createWorkspace(body: Record<string, unknown> = {}) {
    const response = await t.request('POST', '/v1/admin/workspaces', {
      body: { name: unique('Workspace'), ...body },
    });
    expect(response.status).toBe(200);
    return response.body as { id: string; slug: string };
  }

  async function createKey(path: string, body: Record<string, unknown>, key?: string) {
    return t.request('POST', `/v1/api-keys/${path}`, { body: { name: unique('key'), ...body }, key });
  }

  /** A request any live workspace or admin key may make: the key's own record. */
  const probe = (key: string, id: string) => t.request('GET', `/v1/api-keys/${id}`, { key });

  beforeAll(async () => {
    t = await startTestApp({ GATEWAY_KEY_ROTATION_TRANSITION_MS: String(TRANSITION_MS) });
    ownerId = (await t.request('GET', '/v1/admin/users?role=owner')).body.data[0].id;
  });
  afterAll(async () => t?.close());

  it('every type and sub-type can be created; the raw key is returned once and authenticates', async () => {
    const workspace = await createWorkspace();
    const member = await onboard({ workspaces: [{ id: workspace.id, role: 'member' }] });
    const cases = [
      { path: 'organisation/service', body: { scopes: ['api_keys.read', 'admin_api_keys.manage'] } },
      {
        path: 'organisation/user',
        body: { scopes: ['api_keys.read', 'admin_api_keys.manage'], user_id: ownerId },
      },
      { path: 'workspace/service', body: { scopes: ['api_keys.read'], workspace_id: workspace.slug } },
      {
        path: 'workspace/user',
        body: {
          scopes: ['api_keys.read', 'completions.write'],
          workspace_id: workspace.id,
          user_id: member.id,
        },
      },
    ];
    for (const { path, body } of cases) {
      const created = await createKey(path, body);
      expect(created.status).toBe(200);
      const type = path.replace('/', '-');
      expect(created.body).toMatchObject({ object: 'api-key', type, status: 'active', scopes: body.scopes });
      expect(created.body.key).toMatch(/^sb-[A-Za-z0-9_-]{43}$/);
      expect(created.body.workspace_id).toBe(type.startsWith('workspace') ? workspace.id : null);
      expect(created.body.user_id).toBe((body as { user_id?: string }).user_id ?? null);
      // Workspace members hold no api_keys.read, so their key is narrowed by their role.
      const used = await probe(created.body.key, created.body.id);
      expect(used.status).toBe(path === 'workspace/user' ? 403 : 200);
      if (path === 'workspace/user') expect(used.body.error.code).toBe('permission_denied');
      else expect(used.body.key).toMatch(MASKED);
    }
  });

  it('an unknown key type path answers 400', async () => {
    for (const path of ['team/service', 'workspace/robot', 'organisation/services']) {
      const response = await createKey(path, { scopes: [] });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_key_type', param: 'type' });
    }
  });

  it('scopes are checked against the catalogue and what the key kind can do', async () => {
    const unknown = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['logs.view', 'logs.destroy'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_scope', param: 'scopes[1]' });
    const adminOnly = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['users.delete'],
    });
    expect(adminOnly.status).toBe(400);
    expect(adminOnly.body.error.param).toBe('scopes[0]');
    const workspaceOnly = await createKey('organisation/service', { scopes: ['completions.write'] });
    expect(workspaceOnly.status).toBe(400);
    const missing = await createKey('organisation/service', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('scopes');
    // The spec's named scopes are in the catalogue.
    const named = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: [
        'logs.export',
        'logs.list',
        'logs.view',
        'virtual_keys.create',
        'virtual_keys.update',
        'mcp.invoke',
      ],
    });
    expect(named.status).toBe(200);
    const duplicate = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['logs.view', 'logs.view'],
    });
    expect(duplicate.body.scopes).toEqual(['logs.view']);
  });

  it('workspace keys need a visible, active workspace; organisation keys refuse one; owners must fit the kind', async () => {
    const member = await onboard();
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['workspace/service', { scopes: [] }, 400, 'workspace_required'],
      ['workspace/service', { scopes: [], workspace_id: 'nowhere' }, 404, 'workspace_not_found'],
      ['organisation/service', { scopes: [], workspace_id: 'default' }, 400, 'workspace_not_allowed'],
      [
        'workspace/service',
        { scopes: [], workspace_id: 'default', user_id: ownerId },
        400,
        'user_id_not_allowed',
      ],
      ['organisation/user', { scopes: [] }, 400, 'user_required'],
      ['organisation/user', { scopes: [], user_id: member.id }, 422, 'user_not_admin'],
      ['workspace/user', { scopes: [], workspace_id: 'default', user_id: member.id }, 422, 'user_not_member'],
      [
        'workspace/user',
        { scopes: [], workspace_id: 'default', user_id: '00000000-0000-4000-8000-000000000000' },
        404,
        'user_not_found',
      ],
    ];
    for (const [path, body, status, code] of cases) {
      const response = await createKey(path, body);
      expect({ path, body, status: response.status, code: response.body.error?.code }).toEqual({
        path,
        body,
        status,
        code,
      });
    }
  });

  it('a workspace manager creates keys for another member of their workspace, within their own scopes', async () => {
    const workspace = await createWorkspace();
    const other = await createWorkspace();
    const manager = await onboard({
      workspaces: [{ id: workspace.id, role: 'manager' }],
      scopes: ['api_keys.create', 'api_keys.read', 'api_keys.list', 'logs.view'],
    });
    const member = await onboard({ workspaces: [{ id: workspace.id, role: 'member' }] });
    const stranger = await onboard({ workspaces: [{ id: other.id, role: 'member' }] });
    const key = workspaceKey(manager, workspace.id).key;

    const onBehalf = await createKey('workspace/user', { scopes: ['logs.view'], user_id: member.id }, key);
    expect(onBehalf.status).toBe(200);
    expect(onBehalf.body).toMatchObject({
      workspace_id: workspace.id,
      user_id: member.id,
      type: 'workspace-user',
    });
    const own = await createKey('workspace/user', { scopes: ['logs.view'] }, key);
    expect(own.body.user_id).toBe(manager.id);

    const notGrantable = await createKey(
      'workspace/user',
      { scopes: ['configs.create'], user_id: member.id },
      key,
    );
    expect(notGrantable.status).toBe(403);
    expect(notGrantable.body.error).toMatchObject({ code: 'scope_not_grantable', param: 'scopes[0]' });
    const outsider = await createKey('workspace/user', { scopes: [], user_id: stranger.id }, key);
    expect(outsider.status).toBe(422);
    const elsewhere = await createKey('workspace/service', { scopes: [], workspace_id: other.id }, key);
    expect(elsewhere.status).toBe(404);
    const adminKey = await createKey('organisation/service', { scopes: [] }, key);
    expect(adminKey.status).toBe(403);

    const byMember = await createKey(
      'workspace/user',
      { scopes: [] },
      workspaceKey(member, workspace.id).key,
    );
    expect(byMember.status).toBe(403);
  });

  it('lists and gets show a masked key; the raw value is never returned after create', async () => {
    const created = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['api_keys.read'],
    });
    const raw: string = created.body.key;
    const listed = await t.request('GET', '/v1/api-keys?page_size=100');
    const item = listed.body.data.find((key: { id: string }) => key.id === created.body.id);
    expect(item.key).toMatch(MASKED);
    expect(item.key.slice(0, 7)).toBe(raw.slice(0, 7));
    expect(item.key.slice(-4)).toBe(raw.slice(-4));
    const fetched = await t.request('GET', `/v1/api-keys/${created.body.id}`);
    expect(fetched.body.key).toBe(item.key);
    const updated = await t.request('PUT', `/v1/api-keys/${created.body.id}`, { body: { name: 'renamed' } });
    for (const body of [listed.body, fetched.body, updated.body])
      expect(JSON.stringify(body)).not.toContain(raw);

    const scoped = await t.request('GET', '/v1/api-keys?workspace_id=default&page_size=100');
    expect(
      scoped.body.data.every(
        (key: { workspace_id: string }) => key.workspace_id === fetched.body.workspace_id,
      ),
    ).toBe(true);
    const paged = await t.request('GET', '/v1/api-keys?pageSize=1&currentPage=1');
    expect(paged.body.total).toBe(listed.body.total);
    expect(paged.body.data[0].id).toBe(listed.body.data[1].id);
  });

  it('updating a key changes its fields, and narrowed scopes apply at once', async () => {
    const created = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['api_keys.read', 'api_keys.list'],
    });
    const key: string = created.body.key;
    expect((await t.request('GET', '/v1/api-keys', { key })).status).toBe(200);
    const updated = await t.request('PUT', `/v1/api-keys/${created.body.id}`, {
      body: {
        name: 'renamed',
        description: 'for the nightly job',
        scopes: ['api_keys.read'],
        defaults: { metadata: { team: 'data' } },
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 10 }],
        usage_limits: { credit_limit: 5, periodic_reset: 'weekly' },
        alert_emails: ['ops@example.test'],
      },
    });
    expect(updated.status).toBe(200);
    const fetched = await t.request('GET', `/v1/api-keys/${created.body.id}`);
    expect(fetched.body).toMatchObject({
      name: 'renamed',
      description: 'for the nightly job',
      scopes: ['api_keys.read'],
      defaults: { metadata: { team: 'data' } },
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 10 }],
      usage_limits: { credit_limit: 5, periodic_reset: 'weekly' },
      alert_emails: ['ops@example.test'],
    });
    expect((await t.request('GET', '/v1/api-keys', { key })).status).toBe(403);
    const badScope = await t.request('PUT', `/v1/api-keys/${created.body.id}`, {
      body: { scopes: ['nope'] },
    });
    expect(badScope.status).toBe(400);
    const badLimits = await t.request('PUT', `/v1/api-keys/${created.body.id}`, {
      body: { usage_limits: { periodic_reset: 'weekly', periodic_reset_days: 3 } },
    });
    expect(badLimits.status).toBe(400);
    expect(badLimits.body.error.param).toBe('usage_limits.periodic_reset_days');
    expect((await t.request('PUT', '/v1/api-keys/not-a-key', { body: { name: 'x' } })).status).toBe(404);
  });

  it('a deleted key answers 401 at once', async () => {
    const created = await createKey('organisation/service', {
      scopes: ['api_keys.read', 'admin_api_keys.manage'],
    });
    expect((await probe(created.body.key, created.body.id)).status).toBe(200);
    const deleted = await t.request('DELETE', `/v1/api-keys/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.body.id, deleted: true });
    const refused = await probe(created.body.key, created.body.id);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_api_key');
    expect((await t.request('GET', `/v1/api-keys/${created.body.id}`)).status).toBe(404);
    expect((await t.request('DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(404);
  });

  it("a rotated key's previous value works until the transition ends, then 401", async () => {
    const created = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['api_keys.read'],
    });
    const old: string = created.body.key;
    expect((await probe(old, created.body.id)).status).toBe(200);
    const before = Date.now();
    const rotated = await t.request('POST', `/v1/api-keys/${created.body.id}/rotate`, { body: {} });
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.body.key;
    expect(fresh).not.toBe(old);
    expect(rotated.body.id).toBe(created.body.id);
    expect(rotated.body.last_rotated_at).toEqual(expect.any(String));
    const transitionEnd = Date.parse(rotated.body.previous_key_expires_at);
    expect(transitionEnd).toBeGreaterThanOrEqual(before + TRANSITION_MS - 50);
    expect(transitionEnd).toBeLessThanOrEqual(Date.now() + TRANSITION_MS + 50);

    expect((await probe(old, created.body.id)).status).toBe(200);
    expect((await probe(fresh, created.body.id)).status).toBe(200);
    const listed = await t.request('GET', `/v1/api-keys/${created.body.id}`);
    expect(listed.body.key.slice(-4)).toBe(fresh.slice(-4));

    await waitUntilPast(rotated.body.previous_key_expires_at);
    const refused = await probe(old, created.body.id);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_api_key');
    expect((await probe(fresh, created.body.id)).status).toBe(200);
  });

  it('an explicit key_transition_period_ms sets the transition end and may not be under 30 minutes', async () => {
    const created = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['api_keys.read'],
    });
    const tooShort = await t.request('POST', `/v1/api-keys/${created.body.id}/rotate`, {
      body: { key_transition_period_ms: 60_000 },
    });
    expect(tooShort.status).toBe(400);
    expect(tooShort.body.error.param).toBe('key_transition_period_ms');
    expect((await probe(created.body.key, created.body.id)).status).toBe(200);
    const before = Date.now();
    const rotated = await t.request('POST', `/v1/api-keys/${created.body.id}/rotate`, {
      body: { key_transition_period_ms: 1_800_000 },
    });
    expect(rotated.status).toBe(200);
    const end = Date.parse(rotated.body.previous_key_expires_at);
    expect(end).toBeGreaterThanOrEqual(before + 1_800_000 - 50);
    expect(end).toBeLessThanOrEqual(Date.now() + 1_800_000 + 50);
    // Rotating again: the value replaced just now is the one in transition; the first is gone.
    const again = await t.request('POST', `/v1/api-keys/${created.body.id}/rotate`, { body: {} });
    expect((await probe(created.body.key, created.body.id)).status).toBe(401);
    expect((await probe(rotated.body.key, created.body.id)).status).toBe(200);
    expect((await probe(again.body.key, created.body.id)).status).toBe(200);
  });

  it('with GATEWAY_KEY_ROTATION_TRANSITION_MS=0 a rotated key stops working at once', async () => {
    const other = await startTestApp({ GATEWAY_KEY_ROTATION_TRANSITION_MS: '0' });
    try {
      const created = await other.request('POST', '/v1/api-keys/organisation/service', {
        body: { name: 'k', scopes: ['api_keys.read', 'admin_api_keys.manage'] },
      });
      const use = (key: string) => other.request('GET', `/v1/api-keys/${created.body.id}`, { key });
      expect((await use(created.body.key)).status).toBe(200);
      const rotated = await other.request('POST', `/v1/api-keys/${created.body.id}/rotate`, { body: {} });
      expect(rotated.status).toBe(200);
      expect(rotated.body.previous_key_expires_at).toBeNull();
      expect((await use(created.body.key)).status).toBe(401);
      expect((await use(rotated.body.key)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('a workspace caps active user keys per user (409 past max_user_keys_per_user); service keys do not count', async () => {
    const workspace = await createWorkspace({ api_key_policy: { max_user_keys_per_user: 2 } });
    const member = await onboard({ workspaces: [{ id: workspace.id, role: 'member' }] });
    const forMember = () =>
      createKey('workspace/user', { workspace_id: workspace.id, user_id: member.id, scopes: ['logs.view'] });
    // Acceptance issued the first one.
    const second = await forMember();
    expect(second.status).toBe(200);
    const third = await forMember();
    expect(third.status).toBe(409);
    expect(third.body.error.code).toBe('user_key_limit');
    expect((await createKey('workspace/service', { workspace_id: workspace.id, scopes: [] })).status).toBe(
      200,
    );
    // Another user has their own allowance.
    const colleague = await onboard({ workspaces: [{ id: workspace.id, role: 'member' }] });
    expect(
      (await createKey('workspace/user', { workspace_id: workspace.id, user_id: colleague.id, scopes: [] }))
        .status,
    ).toBe(200);
    await t.request('DELETE', `/v1/api-keys/${second.body.id}`);
    expect((await forMember()).status).toBe(200);
  });

  it("user keys take the workspace's default expiry and may not outlive its maximum", async () => {
    const workspace = await createWorkspace({
      api_key_policy: { default_expiry_days: 7, max_expiry_days: 30 },
    });
    const member = await onboard({ workspaces: [{ id: workspace.id, role: 'member' }] });
    const near = (iso: string | null, days: number) => {
      expect(iso).not.toBeNull();
      expect(Math.abs(Date.parse(iso!) - (Date.now() + days * DAY_MS))).toBeLessThan(60_000);
    };
    const onboardingKey = await t.request('GET', `/v1/api-keys/${workspaceKey(member, workspace.id).id}`);
    near(onboardingKey.body.expires_at, 7);
    const body = { workspace_id: workspace.id, user_id: member.id, scopes: [] };
    const byDefault = await createKey('workspace/user', body);
    near(byDefault.body.expires_at, 7);
    const explicit = await createKey('workspace/user', {
      ...body,
      expires_at: new Date(Date.now() + 20 * DAY_MS).toISOString(),
    });
    expect(explicit.status).toBe(200);
    near(explicit.body.expires_at, 20);
    const tooLate = await createKey('workspace/user', {
      ...body,
      expires_at: new Date(Date.now() + 31 * DAY_MS).toISOString(),
    });
    expect(tooLate.status).toBe(400);
    expect(tooLate.body.error).toMatchObject({ code: 'invalid_expiry', param: 'expires_at' });
    const never = await createKey('workspace/user', { ...body, expires_at: null });
    expect(never.status).toBe(400);
    expect(never.body.error.code).toBe('invalid_expiry');
    const extended = await t.request('PUT', `/v1/api-keys/${byDefault.body.id}`, {
      body: { expires_at: new Date(Date.now() + 40 * DAY_MS).toISOString() },
    });
    expect(extended.status).toBe(400);
    const cleared = await t.request('PUT', `/v1/api-keys/${byDefault.body.id}`, {
      body: { expires_at: null },
    });
    expect(cleared.status).toBe(400);

    // With only a maximum, it is also the default; service keys are not user keys.
    const capped = await createWorkspace({ api_key_policy: { max_expiry_days: 10 } });
    const cappedMember = await onboard({ workspaces: [{ id: capped.id, role: 'member' }] });
    const capDefault = await createKey('workspace/user', {
      workspace_id: capped.id,
      user_id: cappedMember.id,
      scopes: [],
    });
    near(capDefault.body.expires_at, 10);
    const service = await createKey('workspace/service', { workspace_id: capped.id, scopes: [] });
    expect(service.body.expires_at).toBeNull();
  });

  it('expires_at in the past answers 400 on create and update', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const created = await createKey('organisation/service', { scopes: [], expires_at: past });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'invalid_expiry', param: 'expires_at' });
    const valid = await createKey('organisation/service', { scopes: [] });
    const updated = await t.request('PUT', `/v1/api-keys/${valid.body.id}`, { body: { expires_at: past } });
    expect(updated.status).toBe(400);
    const notADate = await createKey('organisation/service', { scopes: [], expires_at: 'tomorrow' });
    expect(notADate.status).toBe(400);
    expect(notADate.body.error.param).toBe('expires_at');
  });

  it('a key past expires_at answers 401 expired_api_key at once; the expiry job marks it expired, once', async () => {
    const created = await createKey('workspace/service', {
      workspace_id: 'default',
      scopes: ['api_keys.read'],
      expires_at: new Date(Date.now() + 1000).toISOString(),
    });
    expect(created.status).toBe(200);
    expect((await probe(created.body.key, created.body.id)).status).toBe(200);
    await waitUntilPast(created.body.expires_at);

    const refused = await probe(created.body.key, created.body.id);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('expired_api_key');
    expect((await t.request('GET', `/v1/api-keys/${created.body.id}`)).body.status).toBe('expired');
    expect(await keysTable().findOneBy({ id: created.body.id })).toMatchObject({ status: 'active' });

    const job = t.app.get(ApiKeyExpiryJob);
    expect(await job.run()).toBeGreaterThanOrEqual(1);
    expect(await keysTable().findOneBy({ id: created.body.id })).toMatchObject({ status: 'expired' });
    const updatedAt = (await keysTable().findOneBy({ id: created.body.id }))!.updated_at;
    expect(await job.run()).toBe(0);
    expect((await keysTable().findOneBy({ id: created.body.id }))!.updated_at).toEqual(updatedAt);
    expect((await probe(created.body.key, created.body.id)).status).toBe(401);

    // A later expiry brings it back.
    const renewed = await t.request('PUT', `/v1/api-keys/${created.body.id}`, {
      body: { expires_at: new Date(Date.now() + DAY_MS).toISOString() },
    });
    expect(renewed.body.status).toBe('active');
    expect((await probe(created.body.key, created.body.id)).status).toBe(200);
  });

  it('the bootstrap admin key holds every admin capability', async () => {
    const listed = await t.request('GET', '/v1/api-keys?page_size=100');
    const bootstrap = listed.body.data.find((key: { name: string }) => key.name === 'Bootstrap admin key');
    expect(bootstrap).toMatchObject({ type: 'organisation-service', creation_mode: 'auto' });
    expect([...bootstrap.scopes].sort()).toEqual([...KEY_CAPABILITIES['organisation-service']].sort());
  });
});
