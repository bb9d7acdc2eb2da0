import { KEY_CAPABILITIES } from '../../libs/access/src';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

/**
 * Every administrative route of the foundation, called by every kind of principal, against the
 * role matrix (libs/access/src/role-matrix.ts) and the capability matrix
 * (libs/access/src/capability-matrix.ts). The expectations below are derived from those two files
 * and the spec's Authentication section, not recorded from the server:
 *
 * - owner, admin and the admin key reach the whole organisation;
 * - the manager and the member act through their workspace user key for W, the workspace key is a
 *   service key for W, the wrong-workspace key a service key for W2;
 * - organisation-only permissions (users, invites, workspace create/update/delete, security
 *   settings, audit logs, admin keys) are refused to every workspace principal: 403;
 * - a workspace principal holding the permission but asking for W's data from W2 gets 404,
 *   exactly as if the target did not exist;
 * - no key and an expired key are 401 everywhere.
 */

const PRINCIPALS = [
  'owner',
  'admin',
  'manager',
  'member',
  'admin key',
  'workspace key',
  'wrong-workspace key',
  'expired key',
  'no key',
] as const;
type PrincipalName = (typeof PRINCIPALS)[number];

const A = 'allow';
type Expected = typeof A | 401 | 403 | 404;
type Row = [Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected];

interface Fixtures {
  workspaceId: string;
  otherWorkspaceId: string;
  ownerId: string;
  memberId: string;
  inviteId: string;
  workspaceKeyId: string;
  /** A user who just accepted an invite, in W with `workspaceRole` when given. */
  freshUser(workspaceRole?: 'member' | 'manager'): Promise<string>;
  freshInvite(): Promise<string>;
  freshWorkspace(): Promise<string>;
  /** A workspace service key of W: its own target, so one principal's delete leaves the next a key. */
  freshWorkspaceKey(): Promise<string>;
  email(): string;
}

interface Target {
  params?: Record<string, string>;
  body?: unknown;
}
type TargetOf = (f: Fixtures) => Target | Promise<Target>;

const none: TargetOf = () => ({});
const inW =
  (extra: Record<string, string> = {}, body?: unknown): TargetOf =>
  (f) => ({
    params: { workspaceId: f.workspaceId, ...extra },
    body,
  });
const WORKSPACE_SCOPES = [...KEY_CAPABILITIES['workspace-service']];
const ADMIN_SCOPES = [...KEY_CAPABILITIES['organisation-service']];

// One row per route; columns: owner, admin, manager, member, admin key (AK), workspace key of W
// (WK), wrong-workspace key of W2 (WK2), expired key, no key. A = allow (200). The last field
// builds the target; targets live in W, and destructive rows make a fresh one per principal.
// A list answers 200 to a workspace principal holding the permission, filtered to its own
// workspace: the two tests after the matrix check the filtering.
// prettier-ignore
const MATRIX: [string, Row, TargetOf][] = [
  // route                                                  own  adm  mgr  mem  AK   WK   WK2  exp  no
  // Users: "manage users and permissions" is organisation-only (capability matrix).
  ['GET /admin/users',                                     [A,   A,   403, 403, A,   403, 403, 401, 401], none],
  ['GET /admin/users/:userId',                             [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ params: { userId: f.ownerId } })],
  ['PUT /admin/users/:userId',                             [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { userId: await f.freshUser() }, body: { role: 'admin' } })],
  ['DELETE /admin/users/:userId',                          [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { userId: await f.freshUser() } })],
  // Invites: organisation-only.
  ['POST /admin/users/invites',                            [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ body: { email: f.email(), role: 'member' } })],
  ['GET /admin/users/invites',                             [A,   A,   403, 403, A,   403, 403, 401, 401], none],
  ['GET /admin/users/invites/:inviteId',                   [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ params: { inviteId: f.inviteId } })],
  ['DELETE /admin/users/invites/:inviteId',                [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { inviteId: await f.freshInvite() } })],
  ['POST /admin/users/invites/:inviteId/resend',           [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { inviteId: await f.freshInvite() } })],
  // Workspaces: creating and managing them is organisation-only; reading your own is a workspace
  // permission (another workspace: 404). Listing is filtered to your workspace, and only owners
  // and admins may list archived ones (spec, "List workspaces").
  ['POST /admin/workspaces',                               [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ body: { name: `Created ${f.email()}` } })],
  ['GET /admin/workspaces',                                [A,   A,   A,   A,   A,   A,   A,   401, 401], none],
  ['GET /admin/workspaces?status=archived',                [A,   A,   403, 403, A,   403, 403, 401, 401], none],
  ['GET /admin/workspaces/:workspaceId',                   [A,   A,   A,   A,   A,   A,   404, 401, 401], inW()],
  ['PUT /admin/workspaces/:workspaceId',                   [A,   A,   403, 403, A,   403, 403, 401, 401], inW({}, { description: 'updated by the access matrix' })],
  ['DELETE /admin/workspaces/:workspaceId',                [A,   A,   403, 403, A,   403, 403, 401, 401], async (f) => ({ params: { workspaceId: await f.freshWorkspace() } })],
  // Members: a workspace resource. Managers (and workspace keys) manage them, members only read.
  ['POST /admin/workspaces/:workspaceId/users',            [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { workspaceId: f.workspaceId }, body: { users: [{ id: await f.freshUser(), role: 'member' }] } })],
  ['GET /admin/workspaces/:workspaceId/users',             [A,   A,   A,   A,   A,   A,   404, 401, 401], inW()],
  ['GET /admin/workspaces/:workspaceId/users/:userId',     [A,   A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { workspaceId: f.workspaceId, userId: f.memberId } })],
  ['PUT /admin/workspaces/:workspaceId/users/:userId',     [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { workspaceId: f.workspaceId, userId: await f.freshUser('member') }, body: { role: 'manager' } })],
  ['DELETE /admin/workspaces/:workspaceId/users/:userId',  [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { workspaceId: f.workspaceId, userId: await f.freshUser('member') } })],
  // Security settings: owners and admins only (spec item 9), organisation and workspace level.
  ['GET /admin/security-settings',                         [A,   A,   403, 403, A,   403, 403, 401, 401], none],
  ['PUT /admin/security-settings',                         [A,   A,   403, 403, A,   403, 403, 401, 401], () => ({ body: { membersWritePrompts: false } })],
  ['GET /admin/workspaces/:workspaceId/security-settings', [A,   A,   403, 403, A,   403, 403, 401, 401], inW()],
  ['PUT /admin/workspaces/:workspaceId/security-settings', [A,   A,   403, 403, A,   403, 403, 401, 401], inW({}, { membersViewPrompts: true })],
  // API keys: admin keys are created by owners and admins only; workspace keys by managers of W,
  // owners and admins, and workspace keys of W. Members create no keys (role matrix).
  ['POST /api-keys/organisation/service',                  [A,   A,   403, 403, A,   403, 403, 401, 401], () => ({ body: { name: 'matrix admin key', scopes: ['users.list'] } })],
  ['POST /api-keys/organisation/user',                     [A,   A,   403, 403, A,   403, 403, 401, 401], (f) => ({ body: { name: 'matrix owner key', user_id: f.ownerId, scopes: ['users.list'] } })],
  ['POST /api-keys/workspace/service',                     [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: { name: 'matrix ws key', workspace_id: f.workspaceId, scopes: ['completions.write'] } })],
  ['POST /api-keys/workspace/user',                        [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: { name: 'matrix user key', workspace_id: f.workspaceId, user_id: f.memberId, scopes: ['completions.write'] } })],
  ['GET /api-keys',                                        [A,   A,   A,   403, A,   A,   A,   401, 401], none],
  ['GET /api-keys/:id',                                    [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { id: f.workspaceKeyId } })],
  ['PUT /api-keys/:id',                                    [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { id: f.workspaceKeyId }, body: { name: 'renamed by the matrix' } })],
  ['DELETE /api-keys/:id',                                 [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { id: await f.freshWorkspaceKey() } })],
  ['POST /api-keys/:id/rotate',                            [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { id: await f.freshWorkspaceKey() }, body: {} })],
  // Audit logs: owners and admins only.
  ['GET /audit-logs',                                      [A,   A,   403, 403, A,   403, 403, 401, 401], none],
];

const CASES = MATRIX.flatMap(([route, expected, target]) =>
  PRINCIPALS.map((principal, column) => ({
    title: `${principal}: ${route} → ${expected[column]}`,
    principal,
    route,
    target,
    expected: expected[column],
  })),
);

function fill(route: string, params: Record<string, string> = {}): { method: string; url: string } {
  const [method, template] = route.split(' ');
  const url = template.replace(/:(\w+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`No value for :${name} in ${route}`);
    return encodeURIComponent(value);
  });
  return { method, url: `/v1${url}` };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeE2E('access matrix', () => {
  let t: TestApp;
  let fixtures: Fixtures;
  const keys = {} as Record<PrincipalName, string | null>;
  let emails = 0;

  /** Every setup call goes through the HTTP API with the bootstrap admin key, and must succeed. */
  async function admin(method: string, url: string, body?: unknown) {
    const response = await t.request(method, url, { key: t.adminKey, body });
    if (response.status !== 200) {
      throw new Error(`setup ${method} ${url} → ${response.status} ${JSON.stringify(response.body)}`);
    }
    return response.body;
  }

  async function invite(role: 'admin' | 'member', workspaces: { id: string; role: string }[] = []) {
    const invitation = await admin('POST', '/v1/admin/users/invites', {
      email: fixtures.email(),
      role,
      workspaces,
    });
    const accepted = await t.request('POST', '/v1/invites/accept', {
      key: null,
      body: { token: invitation.token },
    });
    if (accepted.status !== 200) throw new Error(`accept → ${accepted.status}`);
    return accepted.body as {
      user: { id: string };
      api_keys: { id: string; key: string; type: string; workspace_id: string | null }[];
    };
  }

  beforeAll(async () => {
    t = await startTestApp();

    // The expired key first: valid now, past its expiry by the time the cases run.
    const expiresAt = Date.now() + 1500;
    const expiring = await admin('POST', '/v1/api-keys/organisation/service', {
      name: 'expiring admin key',
      scopes: ADMIN_SCOPES,
      expires_at: new Date(expiresAt).toISOString(),
    });
    const stillValid = await t.request('GET', '/v1/admin/users', { key: expiring.key });
    if (stillValid.status !== 200) throw new Error(`the expiring key should work before its expiry`);

    const workspace = await admin('POST', '/v1/admin/workspaces', { name: 'Matrix W', slug: 'matrix-w' });
    const other = await admin('POST', '/v1/admin/workspaces', { name: 'Matrix W2', slug: 'matrix-w2' });
    const owner = (await admin('GET', '/v1/admin/users?role=owner')).data[0];

    fixtures = {
      workspaceId: workspace.id,
      otherWorkspaceId: other.id,
      ownerId: owner.id,
      memberId: '',
      inviteId: '',
      workspaceKeyId: '',
      email: () => `matrix-${(emails += 1)}@example.com`,
      freshUser: async (workspaceRole) =>
        (await invite('member', workspaceRole ? [{ id: workspace.id, role: workspaceRole }] : [])).user.id,
      freshInvite: async () =>
        (await admin('POST', '/v1/admin/users/invites', { email: fixtures.email(), role: 'member' })).id,
      freshWorkspace: async () => (await admin('POST', '/v1/admin/workspaces', { name: 'Matrix target' })).id,
      freshWorkspaceKey: async () =>
        (
          await admin('POST', '/v1/api-keys/workspace/service', {
            name: 'matrix target key',
            workspace_id: workspace.id,
            scopes: ['completions.write'],
          })
        ).id,
    };

    const ownerKey = await admin('POST', '/v1/api-keys/organisation/user', {
      name: 'owner personal key',
      user_id: owner.id,
      scopes: ADMIN_SCOPES,
    });
    const orgAdmin = await invite('admin');
    const manager = await invite('member', [{ id: workspace.id, role: 'manager' }]);
    const member = await invite('member', [{ id: workspace.id, role: 'member' }]);
    const workspaceKey = await admin('POST', '/v1/api-keys/workspace/service', {
      name: 'W service key',
      workspace_id: workspace.id,
      scopes: WORKSPACE_SCOPES,
    });
    const wrongKey = await admin('POST', '/v1/api-keys/workspace/service', {
      name: 'W2 service key',
      workspace_id: other.id,
      scopes: WORKSPACE_SCOPES,
    });
    const personal = (accepted: Awaited<ReturnType<typeof invite>>, type: string) => {
      const found = accepted.api_keys.find((key) => key.type === type);
      if (!found) throw new Error(`invite acceptance issued no ${type} key`);
      return found.key;
    };

    fixtures.memberId = member.user.id;
    fixtures.inviteId = await fixtures.freshInvite();
    fixtures.workspaceKeyId = await fixtures.freshWorkspaceKey();
    Object.assign(keys, {
      owner: ownerKey.key,
      admin: personal(orgAdmin, 'organisation-user'),
      manager: personal(manager, 'workspace-user'),
      member: personal(member, 'workspace-user'),
      'admin key': t.adminKey,
      'workspace key': workspaceKey.key,
      'wrong-workspace key': wrongKey.key,
      'expired key': expiring.key,
      'no key': null,
    } satisfies Record<PrincipalName, string | null>);

    await sleep(Math.max(0, expiresAt - Date.now() + 100));
  });
  afterAll(async () => t?.close());

  it.each(CASES)('$title', async ({ principal, route, target, expected }) => {
    const { params, body } = await target(fixtures);
    const { method, url } = fill(route, params);
    const response = await t.request(method, url, { key: keys[principal], body });
    const detail = `${method} ${url} answered ${response.status} ${JSON.stringify(response.body?.error ?? '')}`;
    if (expected === A) {
      expect({ status: response.status, detail }).toEqual({ status: 200, detail });
      return;
    }
    expect({ status: response.status, detail }).toEqual({ status: expected, detail });
    if (expected === 401) {
      const code = principal === 'no key' ? 'missing_api_key' : 'expired_api_key';
      expect(response.body.error.code).toBe(code);
    }
    // A 404 must be the row-level "not yours", never a route that does not exist.
    if (expected === 404) expect(response.body.error.code).not.toBe('route_not_found');
  });

  it('a workspace principal lists only its own workspace', async () => {
    for (const [principal, workspaceId] of [
      ['manager', fixtures.workspaceId],
      ['member', fixtures.workspaceId],
      ['workspace key', fixtures.workspaceId],
      ['wrong-workspace key', fixtures.otherWorkspaceId],
    ] as const) {
      const listed = await t.request('GET', '/v1/admin/workspaces', { key: keys[principal] });
      expect({ principal, ids: listed.body.data?.map((w: { id: string }) => w.id) }).toEqual({
        principal,
        ids: [workspaceId],
      });
    }
  });

  it("the wrong-workspace key's key list holds none of W's keys", async () => {
    const listed = await t.request('GET', '/v1/api-keys', { key: keys['wrong-workspace key'] });
    expect(listed.status).toBe(200);
    expect(listed.body.data.length).toBeGreaterThan(0);
    for (const key of listed.body.data) expect(key.workspace_id).toBe(fixtures.otherWorkspaceId);
  });
});
