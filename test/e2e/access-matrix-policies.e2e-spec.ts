import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PolicyEnforcer } from '@switchboard/policies';
import { A, Fixtures, MatrixContext, MatrixRow, describeAccessMatrix, none } from '../support/access-matrix';

/**
 * The policies routes in the access matrix (harness and principals: test/support/access-matrix.ts).
 *
 * Derived from libs/access: `policies.*` is a workspace resource (not organisation-only in the
 * capability matrix), so admin keys and workspace keys both hold it; in the role matrix owners and
 * admins hold all of it, workspace managers (and admins) create, update and delete, members only
 * list and read. A workspace principal of W2 asking for W's policy gets 404; lists answer 200
 * filtered to the caller's workspace.
 */
interface PolicyFixtures {
  ratePolicyId: string;
  usagePolicyId: string;
}

const rateBody = (workspaceId: string) => ({
  conditions: [{ key: 'workspace_id', value: workspaceId }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 100,
  workspace_id: workspaceId,
});
const usageBody = (workspaceId: string) => ({
  conditions: [{ key: 'workspace_id', value: workspaceId }],
  group_by: [{ key: 'api_key' }],
  type: 'tokens',
  credit_limit: 1000,
  workspace_id: workspaceId,
});

let context: () => MatrixContext<PolicyFixtures>;

/** A tracked entity of the usage policy, made the way the gateway makes them: by spending. */
async function freshEntity(f: Fixtures & PolicyFixtures): Promise<string> {
  const { t } = context();
  const [{ id: organisationId }] = await t.app.get(DataSource).query('SELECT id FROM organisations');
  const enforcer = t.app.get(PolicyEnforcer);
  const apiKeyId = randomUUID();
  const reservation = await enforcer.check({
    organisationId,
    workspaceId: f.workspaceId,
    apiKeyId,
    userId: null,
    metadata: {},
  });
  await enforcer.settle(reservation, { tokens: 1 });
  const listed = await f.admin(
    'GET',
    `/v1/policies/usage-limits/${f.usagePolicyId}/entities?search=${apiKeyId}`,
  );
  return listed.data[0].id as string;
}

// prettier-ignore
const MATRIX: MatrixRow<PolicyFixtures>[] = [
  // route                                                          own  adm  mgr  mem  AK   WK   WK2  exp  no
  ['POST /policies/rate-limits',                                   [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: rateBody(f.workspaceId) })],
  ['GET /policies/rate-limits',                                    [A,   A,   A,   A,   A,   A,   A,   401, 401], none],
  ['GET /policies/rate-limits/:id',                                [A,   A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { id: f.ratePolicyId } })],
  ['PUT /policies/rate-limits/:id',                                [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { id: f.ratePolicyId }, body: { value: 120 } })],
  ['DELETE /policies/rate-limits/:id',                             [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { id: (await f.admin('POST', '/v1/policies/rate-limits', rateBody(f.workspaceId))).id } })],
  ['POST /policies/usage-limits',                                  [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: usageBody(f.workspaceId) })],
  ['GET /policies/usage-limits',                                   [A,   A,   A,   A,   A,   A,   A,   401, 401], none],
  ['GET /policies/usage-limits/:id',                               [A,   A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { id: f.usagePolicyId } })],
  ['PUT /policies/usage-limits/:id',                               [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { id: f.usagePolicyId }, body: { credit_limit: 2000 } })],
  ['DELETE /policies/usage-limits/:id',                            [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { id: (await f.admin('POST', '/v1/policies/usage-limits', usageBody(f.workspaceId))).id } })],
  ['GET /policies/usage-limits/:id/entities',                      [A,   A,   A,   A,   A,   A,   404, 401, 401], (f) => ({ params: { id: f.usagePolicyId } })],
  ['PUT /policies/usage-limits/:id/entities/:entityId/reset',      [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { id: f.usagePolicyId, entityId: await freshEntity(f) } })],
];

describeAccessMatrix<PolicyFixtures>('access matrix: policies', MATRIX, {
  setup: async (f) => ({
    ratePolicyId: (await f.admin('POST', '/v1/policies/rate-limits', rateBody(f.workspaceId))).id,
    usagePolicyId: (await f.admin('POST', '/v1/policies/usage-limits', usageBody(f.workspaceId))).id,
  }),
  more: (matrixContext) => {
    context = matrixContext;

    it('a workspace principal lists only the policies of its own workspace', async () => {
      const { t, keys, fixtures } = context();
      await fixtures.admin('POST', '/v1/policies/rate-limits', rateBody(fixtures.otherWorkspaceId));
      await fixtures.admin('POST', '/v1/policies/usage-limits', usageBody(fixtures.otherWorkspaceId));
      for (const path of [
        '/v1/policies/rate-limits?page_size=100',
        '/v1/policies/usage-limits?page_size=100',
      ]) {
        for (const [principal, workspaceId] of [
          ['manager', fixtures.workspaceId],
          ['member', fixtures.workspaceId],
          ['workspace key', fixtures.workspaceId],
          ['wrong-workspace key', fixtures.otherWorkspaceId],
        ] as const) {
          const listed = await t.request('GET', path, { key: keys[principal] });
          expect(listed.status).toBe(200);
          expect(listed.body.data.length).toBeGreaterThan(0);
          const workspaces = new Set(
            listed.body.data.map((policy: { workspace_id: string }) => policy.workspace_id),
          );
          expect({ principal, path, workspaces: [...workspaces] }).toEqual({
            principal,
            path,
            workspaces: [workspaceId],
          });
        }
        const all = await t.request('GET', path, { key: keys['admin key'] });
        const workspaces = new Set(
          all.body.data.map((policy: { workspace_id: string }) => policy.workspace_id),
        );
        expect(workspaces).toEqual(new Set([fixtures.workspaceId, fixtures.otherWorkspaceId]));
      }
    });

    it("the wrong-workspace key cannot filter by W's workspace", async () => {
      const { t, keys, fixtures } = context();
      for (const path of ['/v1/policies/rate-limits', '/v1/policies/usage-limits']) {
        const response = await t.request('GET', `${path}?workspace_id=${fixtures.workspaceId}`, {
          key: keys['wrong-workspace key'],
        });
        expect(response.status).toBe(404);
      }
    });
  },
});
