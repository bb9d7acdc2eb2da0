import { A, MatrixRow, describeAccessMatrix, inW, none } from '../support/access-matrix';

/**
 * The foundation's administrative routes in the access matrix (harness and principals:
 * test/support/access-matrix.ts).
 */

// One row per route; columns: owner, admin, manager, member, admin key (AK), workspace key of W
// (WK), wrong-workspace key of W2 (WK2), expired key, no key. A = allow (200). The last field
// builds the target; targets live in W, and destructive rows make a fresh one per principal.
// A list answers 200 to a workspace principal holding the permission, filtered to its own
// workspace: the two tests after the matrix check the filtering.
// prettier-ignore
const MATRIX: MatrixRow[] = [
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

describeAccessMatrix('access matrix', MATRIX, {
  more: (context) => {
    it('a workspace principal lists only its own workspace', async () => {
      const { t, keys, fixtures } = context();
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
      const { t, keys, fixtures } = context();
      const listed = await t.request('GET', '/v1/api-keys', { key: keys['wrong-workspace key'] });
      expect(listed.status).toBe(200);
      expect(listed.body.data.length).toBeGreaterThan(0);
      for (const key of listed.body.data) expect(key.workspace_id).toBe(fixtures.otherWorkspaceId);
    });
  },
});
