import { KEY_CAPABILITIES } from '../../libs/access/src';
import { TestApp, describeE2E, startTestApp } from './test-app';

/**
 * The access-matrix harness: every route of a matrix called by every kind of principal, against
 * the role matrix (libs/access/src/role-matrix.ts) and the capability matrix
 * (libs/access/src/capability-matrix.ts). Each area keeps its rows in its own
 * `test/e2e/access-matrix*.e2e-spec.ts`; expectations are derived from those two files and the
 * spec's Authentication section, not recorded from the server:
 *
 * - owner, admin and the admin key reach the whole organisation;
 * - the manager and the member act through their workspace user key for W, the workspace key is a
 *   service key for W, the wrong-workspace key a service key for W2;
 * - organisation-only permissions are refused to every workspace principal: 403;
 * - a workspace principal holding the permission but asking for W's data from W2 gets 404,
 *   exactly as if the target did not exist;
 * - no key and an expired key are 401 everywhere.
 */

export const PRINCIPALS = [
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
export type PrincipalName = (typeof PRINCIPALS)[number];

export const A = 'allow';
export type Expected = typeof A | 401 | 403 | 404;
export type Row = [Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected];

export interface Fixtures {
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
  /** A unique suffix for names and slugs made by targets. */
  unique(): string;
  /** A setup call with the bootstrap admin key; throws unless it answers 200. */
  admin(method: string, url: string, body?: unknown): Promise<any>;
}

export interface Target {
  params?: Record<string, string>;
  body?: unknown;
}
export type TargetOf<X = object> = (f: Fixtures & X) => Target | Promise<Target>;
export type MatrixRow<X = object> = [string, Row, TargetOf<X>];

export const none: TargetOf = () => ({});
export const inW =
  (extra: Record<string, string> = {}, body?: unknown): TargetOf =>
  (f) => ({
    params: { workspaceId: f.workspaceId, ...extra },
    body,
  });
export const WORKSPACE_SCOPES = [...KEY_CAPABILITIES['workspace-service']];
export const ADMIN_SCOPES = [...KEY_CAPABILITIES['organisation-service']];

export interface MatrixContext<X = object> {
  t: TestApp;
  fixtures: Fixtures & X;
  keys: Record<PrincipalName, string | null>;
}

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

/**
 * Declares one matrix suite. `setup` makes the area's own fixtures (through `fixtures.admin`), and
 * `more` declares further tests in the same suite, reading the context once it exists.
 */
export function describeAccessMatrix<X extends object = object>(
  name: string,
  matrix: MatrixRow<X>[],
  options: {
    setup?: (fixtures: Fixtures) => Promise<X>;
    more?: (context: () => MatrixContext<X>) => void;
  } = {},
): void {
  const cases = matrix.flatMap(([route, expected, target]) =>
    PRINCIPALS.map((principal, column) => ({
      title: `${principal}: ${route} → ${expected[column]}`,
      principal,
      route,
      target,
      expected: expected[column],
    })),
  );

  describeE2E(name, () => {
    let t: TestApp;
    let fixtures: Fixtures & X;
    const keys = {} as Record<PrincipalName, string | null>;
    let counter = 0;

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

      const base: Fixtures = {
        workspaceId: workspace.id,
        otherWorkspaceId: other.id,
        ownerId: owner.id,
        memberId: '',
        inviteId: '',
        workspaceKeyId: '',
        email: () => `matrix-${(counter += 1)}@example.com`,
        unique: () => `m${(counter += 1)}`,
        admin,
        freshUser: async (workspaceRole) =>
          (await invite('member', workspaceRole ? [{ id: workspace.id, role: workspaceRole }] : [])).user.id,
        freshInvite: async () =>
          (await admin('POST', '/v1/admin/users/invites', { email: base.email(), role: 'member' })).id,
        freshWorkspace: async () =>
          (await admin('POST', '/v1/admin/workspaces', { name: 'Matrix target' })).id,
        freshWorkspaceKey: async () =>
          (
            await admin('POST', '/v1/api-keys/workspace/service', {
              name: 'matrix target key',
              workspace_id: workspace.id,
              scopes: ['completions.write'],
            })
          ).id,
      };
      fixtures = base as Fixtures & X;

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

      base.memberId = member.user.id;
      base.inviteId = await base.freshInvite();
      base.workspaceKeyId = await base.freshWorkspaceKey();
      if (options.setup) Object.assign(base, await options.setup(base));
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

    it.each(cases)('$title', async ({ principal, route, target, expected }) => {
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

    options.more?.(() => ({ t, fixtures, keys }));
  });
}
