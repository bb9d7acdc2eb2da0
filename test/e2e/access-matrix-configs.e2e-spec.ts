import { A, MatrixRow, TargetOf, describeAccessMatrix } from '../support/access-matrix';

/**
 * The configs routes in the access matrix (harness and principals: test/support/access-matrix.ts).
 * Derivation: `configs.*` are workspace permissions. Owners, admins and admin keys hold all of
 * them everywhere (role matrix: ALL; capability matrix: "configs, providers: yes, all
 * workspaces"); workspace managers and workspace keys hold all of them in their workspace;
 * members only `configs.list` and `configs.read`. A workspace principal holding the permission
 * but asking for W's config from W2 gets 404.
 */
interface ConfigFixtures {
  configSlug: string;
  freshConfig(): Promise<string>;
}

const config: TargetOf<ConfigFixtures> = (f) => ({ params: { slug: f.configSlug } });

// Columns: owner, admin, manager, member, admin key (AK), workspace key of W (WK), wrong-workspace
// key of W2 (WK2), expired key, no key. A = allow (200).
// prettier-ignore
const MATRIX: MatrixRow<ConfigFixtures>[] = [
  // route                        own  adm  mgr  mem  AK   WK   WK2  exp  no
  ['POST /configs',               [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ body: { name: `matrix ${f.unique()}`, workspace_id: f.workspaceId, config: { provider: 'openai' } } })],
  ['GET /configs',                [A,   A,   A,   A,   A,   A,   A,   401, 401], () => ({})],
  ['GET /configs/:slug',          [A,   A,   A,   A,   A,   A,   404, 401, 401], config],
  ['PUT /configs/:slug',          [A,   A,   A,   403, A,   A,   404, 401, 401], (f) => ({ params: { slug: f.configSlug }, body: { name: `renamed ${f.unique()}` } })],
  ['DELETE /configs/:slug',       [A,   A,   A,   403, A,   A,   404, 401, 401], async (f) => ({ params: { slug: await f.freshConfig() } })],
  ['GET /configs/:slug/versions', [A,   A,   A,   A,   A,   A,   404, 401, 401], config],
];

describeAccessMatrix<ConfigFixtures>('access matrix: configs', MATRIX, {
  setup: async (f) => {
    const freshConfig = async () =>
      (
        await f.admin('POST', '/v1/configs', {
          name: `matrix target ${f.unique()}`,
          workspace_id: f.workspaceId,
          config: { provider: 'openai' },
        })
      ).data.slug as string;
    return { configSlug: await freshConfig(), freshConfig };
  },
  more: (context) => {
    it("the wrong-workspace key's config list holds none of W's configs", async () => {
      const { t, keys, fixtures } = context();
      const listed = await t.request('GET', '/v1/configs?page_size=100', {
        key: keys['wrong-workspace key'],
      });
      expect(listed.status).toBe(200);
      for (const item of listed.body.data) expect(item.workspace_id).toBe(fixtures.otherWorkspaceId);
      const own = await t.request('GET', '/v1/configs?page_size=100', { key: keys['workspace key'] });
      expect(own.body.data.map((item: { slug: string }) => item.slug)).toContain(fixtures.configSlug);
    });
  },
});
