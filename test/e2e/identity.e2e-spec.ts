import { DataSource } from 'typeorm';
import { KEY_CAPABILITIES } from '@switchboard/access';
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

const INVITE_TTL_MS = 60_000;

describeE2E('identity: invites, users, workspaces, members, security settings', () => {
  let t: TestApp;
  let ownerId: string;
  let defaultWorkspaceId: string;
  let sequence = 0;

  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;
  const email = (prefix: string) => `${unique(prefix)}@example.test`;
  const repository = (entity: string) => t.app.get(DataSource).getRepository(entity);

  async function invite(body: Record<string, unknown>, key?: string) {
    return t.request('POST', '/v1/admin/users/invites', { body, key });
  }

  async function accept(token: string, extra: Record<string, unknown> = {}) {
    return t.request('POST', '/v1/invites/accept', { key: null, body: { token, ...extra } });
  }

  /** A person signed up through the invite flow, with the keys that acceptance issued. */
  async function onboard(
    options: {
      role?: 'admin' | 'member';
      workspaces?: { id: string; role: 'admin' | 'manager' | 'member' }[];
      scopes?: string[];
      prefix?: string;
    } = {},
  ): Promise<Person> {
    const address = email(options.prefix ?? 'person');
    const created = await invite({
      email: address,
      role: options.role ?? 'member',
      ...(options.workspaces ? { workspaces: options.workspaces } : {}),
      ...(options.scopes ? { workspace_api_key_details: { scopes: options.scopes } } : {}),
    });
    expect(created.status).toBe(200);
    const accepted = await accept(created.body.token);
    expect(accepted.status).toBe(200);
    return { id: accepted.body.user.id, email: address, keys: accepted.body.api_keys };
  }

  const workspaceKey = (person: Person, workspaceId: string) =>
    person.keys.find((key) => key.type === 'workspace-user' && key.workspace_id === workspaceId)!.key;
  const organisationKey = (person: Person) =>
    person.keys.find((key) => key.type === 'organisation-user')!.key;

  async function createWorkspace(body: Record<string, unknown> = {}) {
    const response = await t.request('POST', '/v1/admin/workspaces', {
      body: { name: unique('Workspace'), ...body },
    });
    expect(response.status).toBe(200);
    return response.body as { id: string; slug: string; name: string };
  }

  async function ownerKey(): Promise<string> {
    const created = await t.request('POST', '/v1/api-keys/organisation/user', {
      body: { name: 'owner key', user_id: ownerId, scopes: [...KEY_CAPABILITIES['organisation-user']] },
    });
    expect(created.status).toBe(200);
    return created.body.key;
  }

  beforeAll(async () => {
    t = await startTestApp({ GATEWAY_INVITE_TTL_MS: String(INVITE_TTL_MS) });
    const users = await t.request('GET', '/v1/admin/users?role=owner');
    ownerId = users.body.data[0].id;
    const workspaces = await t.request('GET', '/v1/admin/workspaces?exact_name=Default');
    defaultWorkspaceId = workspaces.body.data[0].id;
  });
  afterAll(async () => t?.close());

  describe('invites', () => {
    it('an invite returns its token once and expires after GATEWAY_INVITE_TTL_MS', async () => {
      const before = Date.now();
      const created = await invite({ email: email('Ttl').toUpperCase(), role: 'member' });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ object: 'invite', role: 'member', status: 'pending' });
      expect(created.body.email).toBe(created.body.email.toLowerCase());
      expect(created.body.token).toEqual(expect.any(String));
      expect(created.body.invite_link).toContain(created.body.token);
      const expiresAt = Date.parse(created.body.expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + INVITE_TTL_MS - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + INVITE_TTL_MS + 1000);
      const fetched = await t.request('GET', `/v1/admin/users/invites/${created.body.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body.id).toBe(created.body.id);
      expect(fetched.body).not.toHaveProperty('token');
      expect(JSON.stringify(fetched.body)).not.toContain(created.body.token);
    });

    it('a second pending invite for the same email answers 409, whatever its case', async () => {
      const address = email('dup');
      expect((await invite({ email: address, role: 'member' })).status).toBe(200);
      const again = await invite({ email: address.toUpperCase(), role: 'admin' });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'invite_exists', param: 'email' });
    });

    it("an invite for an existing user's email answers 409", async () => {
      const person = await onboard();
      const response = await invite({ email: person.email.toUpperCase(), role: 'member' });
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('email_taken');
    });

    it('an invite into an unknown workspace answers 404 and creates nothing', async () => {
      const address = email('nows');
      const response = await invite({
        email: address,
        role: 'member',
        workspaces: [{ id: 'no-such-workspace', role: 'member' }],
      });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('workspace_not_found');
      const listed = await t.request('GET', `/v1/admin/users/invites?email=${address}`);
      expect(listed.body.total).toBe(0);
    });

    it('an unknown scope in workspace_api_key_details answers 400 naming workspace_api_key_details.scopes[i]', async () => {
      const response = await invite({
        email: email('scope'),
        role: 'member',
        workspaces: [{ id: 'default', role: 'member' }],
        workspace_api_key_details: { scopes: ['logs.view', 'not.a_scope'] },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'invalid_scope',
        param: 'workspace_api_key_details.scopes[1]',
      });
      const adminOnly = await invite({
        email: email('scope'),
        role: 'member',
        workspace_api_key_details: { scopes: ['workspaces.create'] },
      });
      expect(adminOnly.status).toBe(400);
      expect(adminOnly.body.error.param).toBe('workspace_api_key_details.scopes[0]');
    });

    it('invites list filters by role, email and status (expired included) and pages', async () => {
      const domain = unique('list');
      const member = await invite({ email: `m@${domain}.test`, role: 'member' });
      const admin = await invite({ email: `a@${domain}.test`, role: 'admin' });
      const stale = await invite({ email: `s@${domain}.test`, role: 'member' });
      const cancelled = await invite({ email: `c@${domain}.test`, role: 'member' });
      await t.request('DELETE', `/v1/admin/users/invites/${cancelled.body.id}`);
      await repository('InviteEntity').update(
        { id: stale.body.id },
        { expires_at: new Date(Date.now() - 1000) },
      );
      const ids = async (query: string) => {
        const response = await t.request('GET', `/v1/admin/users/invites?${query}`);
        expect(response.status).toBe(200);
        return (response.body.data as { id: string }[]).map((item) => item.id);
      };
      const mine = [member, admin, stale, cancelled].map((item) => item.body.id);
      const within = (list: string[]) => list.filter((id) => mine.includes(id)).sort();

      expect(within(await ids('status=expired&page_size=100'))).toEqual([stale.body.id]);
      expect(within(await ids('status=pending&page_size=100'))).toEqual(
        [member.body.id, admin.body.id].sort(),
      );
      expect(within(await ids('status=cancelled&page_size=100'))).toEqual([cancelled.body.id]);
      expect(within(await ids('role=admin&page_size=100'))).toEqual([admin.body.id]);
      expect(await ids(`email=M@${domain}.test`)).toEqual([member.body.id]);
      const fetched = await t.request('GET', `/v1/admin/users/invites/${stale.body.id}`);
      expect(fetched.body.status).toBe('expired');

      const all = await t.request('GET', '/v1/admin/users/invites?page_size=100');
      expect(all.body.total).toBeGreaterThanOrEqual(4);
      for (const query of ['page_size=2&current_page=1', 'pageSize=2&currentPage=1']) {
        const page = await t.request('GET', `/v1/admin/users/invites?${query}`);
        expect(page.body.total).toBe(all.body.total);
        expect(page.body.data.map((item: { id: string }) => item.id)).toEqual(
          all.body.data.slice(2, 4).map((item: { id: string }) => item.id),
        );
      }
      const badStatus = await t.request('GET', '/v1/admin/users/invites?status=lost');
      expect(badStatus.status).toBe(400);
      expect(badStatus.body.error.param).toBe('status');
    });

    it('an unknown invite answers 404 on get, resend and cancel', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      for (const [method, url] of [
        ['GET', `/v1/admin/users/invites/${id}`],
        ['POST', `/v1/admin/users/invites/${id}/resend`],
        ['DELETE', `/v1/admin/users/invites/${id}`],
      ] as const) {
        const response = await t.request(method, url);
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('invite_not_found');
      }
    });

    it('resending issues a new token that works; the old token no longer does', async () => {
      const created = await invite({ email: email('resend'), role: 'member' });
      const resent = await t.request('POST', `/v1/admin/users/invites/${created.body.id}/resend`);
      expect(resent.status).toBe(200);
      expect(resent.body.id).toBe(created.body.id);
      expect(resent.body.token).not.toBe(created.body.token);
      const old = await accept(created.body.token);
      expect(old.status).toBe(404);
      expect(old.body.error.code).toBe('invite_not_found');
      const fresh = await accept(resent.body.token);
      expect(fresh.status).toBe(200);
    });

    it("a cancelled invite's token stops working", async () => {
      const created = await invite({ email: email('cancel'), role: 'member' });
      const cancelled = await t.request('DELETE', `/v1/admin/users/invites/${created.body.id}`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ id: created.body.id, deleted: true });
      const accepted = await accept(created.body.token);
      expect(accepted.status).toBe(409);
      expect(accepted.body.error.code).toBe('invite_not_pending');
      const fetched = await t.request('GET', `/v1/admin/users/invites/${created.body.id}`);
      expect(fetched.body.status).toBe('cancelled');
    });

    it('an invite is single use: the second accept answers 409', async () => {
      const created = await invite({ email: email('once'), role: 'member' });
      expect((await accept(created.body.token)).status).toBe(200);
      const second = await accept(created.body.token);
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe('invite_not_pending');
      const fetched = await t.request('GET', `/v1/admin/users/invites/${created.body.id}`);
      expect(fetched.body.status).toBe('accepted');
      expect(fetched.body.accepted_at).toEqual(expect.any(String));
    });

    it('an expired invite answers 422 on accept and creates no user; resending revives it', async () => {
      const address = email('expired');
      const created = await invite({ email: address, role: 'member' });
      await repository('InviteEntity').update(
        { id: created.body.id },
        { expires_at: new Date(Date.now() - 1000) },
      );
      const accepted = await accept(created.body.token);
      expect(accepted.status).toBe(422);
      expect(accepted.body.error.code).toBe('invite_expired');
      expect((await t.request('GET', `/v1/admin/users?email=${address}`)).body.total).toBe(0);
      // An expired invite no longer blocks a new one for the same address.
      const resent = await t.request('POST', `/v1/admin/users/invites/${created.body.id}/resend`);
      expect(resent.status).toBe(200);
      expect(resent.body.status).toBe('pending');
      expect((await accept(resent.body.token)).status).toBe(200);
    });

    it('an accepted invite cannot be resent or cancelled (409)', async () => {
      const created = await invite({ email: email('done'), role: 'member' });
      await accept(created.body.token);
      const resent = await t.request('POST', `/v1/admin/users/invites/${created.body.id}/resend`);
      expect(resent.status).toBe(409);
      const cancelled = await t.request('DELETE', `/v1/admin/users/invites/${created.body.id}`);
      expect(cancelled.status).toBe(409);
    });

    it('accepting creates the user, their memberships and keys that work', async () => {
      const workspace = await createWorkspace();
      const address = email('joiner');
      const created = await invite({
        email: address,
        role: 'admin',
        workspaces: [{ id: workspace.slug, role: 'manager' }],
        workspace_api_key_details: { scopes: ['workspace_members.list', 'api_keys.list'] },
      });
      const accepted = await accept(created.body.token, { first_name: 'Ada', last_name: 'Lovelace' });
      expect(accepted.status).toBe(200);
      const userId = accepted.body.user.id;
      expect(accepted.body.user).toMatchObject({
        email: address,
        role: 'admin',
        workspaces: [{ workspace_id: workspace.id, role: 'manager' }],
      });
      const user = await t.request('GET', `/v1/admin/users/${userId}`);
      expect(user.body).toMatchObject({
        first_name: 'Ada',
        last_name: 'Lovelace',
        role: 'admin',
        workspace_ids: [workspace.id],
      });
      const member = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users/${userId}`);
      expect(member.status).toBe(200);
      expect(member.body.role).toBe('manager');

      const keys: IssuedKey[] = accepted.body.api_keys;
      expect(keys.map((key) => key.type).sort()).toEqual(['organisation-user', 'workspace-user']);
      const adminKey = keys.find((key) => key.type === 'organisation-user')!;
      expect((await t.request('GET', '/v1/admin/users', { key: adminKey.key })).status).toBe(200);
      const wsKey = keys.find((key) => key.type === 'workspace-user')!;
      expect(wsKey.workspace_id).toBe(workspace.id);
      const members = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users`, {
        key: wsKey.key,
      });
      expect(members.status).toBe(200);
      const stored = await t.request('GET', `/v1/api-keys/${wsKey.id}`);
      expect(stored.body).toMatchObject({
        user_id: userId,
        scopes: ['workspace_members.list', 'api_keys.list'],
      });
      // The requested scopes bound the key: it cannot add members.
      const refused = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        key: wsKey.key,
        body: { users: [{ id: ownerId, role: 'member' }] },
      });
      expect(refused.status).toBe(403);
    });

    it('an organisation member gets no admin key on acceptance', async () => {
      const person = await onboard({ workspaces: [{ id: 'default', role: 'member' }] });
      expect(person.keys.map((key) => key.type)).toEqual(['workspace-user']);
    });
  });

  describe('users', () => {
    it('users list filters by role and email and pages with page_size/current_page or pageSize/currentPage', async () => {
      const domain = unique('users');
      const people = [];
      for (const role of ['member', 'admin', 'member'] as const) {
        const created = await invite({ email: `${role}${people.length}@${domain}.test`, role });
        people.push((await accept(created.body.token)).body.user.id as string);
      }
      const byEmail = await t.request('GET', `/v1/admin/users?email=${domain}`);
      expect(byEmail.body.total).toBe(3);
      const admins = await t.request('GET', `/v1/admin/users?email=${domain}&role=admin`);
      expect(admins.body.data.map((user: { id: string }) => user.id)).toEqual([people[1]]);
      const owners = await t.request('GET', '/v1/admin/users?role=owner');
      expect(owners.body.data.every((user: { role: string }) => user.role === 'owner')).toBe(true);

      expect(byEmail.body.data.map((user: { id: string }) => user.id).sort()).toEqual([...people].sort());
      const seen: string[] = [];
      for (const query of [
        'page_size=1&current_page=0',
        'pageSize=1&currentPage=1',
        'page_size=1&current_page=2',
      ]) {
        const page = await t.request('GET', `/v1/admin/users?email=${domain}&${query}`);
        expect(page.status).toBe(200);
        expect(page.body.total).toBe(3);
        expect(page.body.data).toHaveLength(1);
        expect(page.body.data[0].id).toBe(byEmail.body.data[seen.length].id);
        seen.push(page.body.data[0].id);
      }
      expect(seen.sort()).toEqual([...people].sort());
      const pastEnd = await t.request('GET', `/v1/admin/users?email=${domain}&pageSize=2&currentPage=5`);
      expect(pastEnd.body).toMatchObject({ total: 3, data: [] });
      const tooBig = await t.request('GET', '/v1/admin/users?pageSize=101');
      expect(tooBig.status).toBe(400);
      expect(tooBig.body.error.param).toBe('pageSize');
      const badRole = await t.request('GET', '/v1/admin/users?role=emperor');
      expect(badRole.status).toBe(400);
    });

    it('updating a user changes their names and organisation role, and the role change reaches their key', async () => {
      const person = await onboard({ role: 'admin' });
      const key = organisationKey(person);
      expect((await t.request('GET', '/v1/admin/users', { key })).status).toBe(200);
      const updated = await t.request('PUT', `/v1/admin/users/${person.id}`, {
        body: { first_name: 'Grace', last_name: 'Hopper', role: 'member' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', role: 'member' });
      expect((await t.request('GET', `/v1/admin/users/${person.id}`)).body.role).toBe('member');
      expect((await t.request('GET', '/v1/admin/users', { key })).status).toBe(403);
      const unknownField = await t.request('PUT', `/v1/admin/users/${person.id}`, {
        body: { email: 'x@y.z' },
      });
      expect(unknownField.status).toBe(400);
      const missing = await t.request('PUT', '/v1/admin/users/00000000-0000-4000-8000-000000000000', {
        body: { first_name: 'x' },
      });
      expect(missing.status).toBe(404);
    });

    it('the last owner can be neither demoted nor deleted (409)', async () => {
      const key = await ownerKey();
      const demoted = await t.request('PUT', `/v1/admin/users/${ownerId}`, { key, body: { role: 'admin' } });
      expect(demoted.status).toBe(409);
      expect(demoted.body.error.code).toBe('last_owner');
      const deleted = await t.request('DELETE', `/v1/admin/users/${ownerId}`, { key });
      expect(deleted.status).toBe(409);
      expect(deleted.body.error.code).toBe('last_owner');
      expect((await t.request('GET', `/v1/admin/users/${ownerId}`)).body.role).toBe('owner');
    });

    it('only an owner can grant, remove or delete the owner role (403 for admins and admin keys)', async () => {
      const admin = await onboard({ role: 'admin' });
      const target = await onboard({ role: 'member' });
      for (const key of [organisationKey(admin), t.adminKey]) {
        const grant = await t.request('PUT', `/v1/admin/users/${target.id}`, {
          key,
          body: { role: 'owner' },
        });
        expect(grant.status).toBe(403);
        expect(grant.body.error.code).toBe('owner_only');
        const demote = await t.request('PUT', `/v1/admin/users/${ownerId}`, {
          key,
          body: { role: 'member' },
        });
        expect(demote.status).toBe(403);
        const remove = await t.request('DELETE', `/v1/admin/users/${ownerId}`, { key });
        expect(remove.status).toBe(403);
      }
      // An admin may still manage non-owners.
      const promoted = await t.request('PUT', `/v1/admin/users/${target.id}`, {
        key: organisationKey(admin),
        body: { role: 'admin' },
      });
      expect(promoted.status).toBe(200);

      // With a second owner, the first may step down.
      const owner = await ownerKey();
      const second = await t.request('PUT', `/v1/admin/users/${target.id}`, {
        key: owner,
        body: { role: 'owner' },
      });
      expect(second.status).toBe(200);
      expect(second.body.role).toBe('owner');
      const stepDown = await t.request('PUT', `/v1/admin/users/${target.id}`, {
        key: owner,
        body: { role: 'admin' },
      });
      expect(stepDown.status).toBe(200);
    });

    it('deleting a user removes their memberships and keys at once (their key then gets 401)', async () => {
      const workspace = await createWorkspace();
      const person = await onboard({ role: 'admin', workspaces: [{ id: workspace.id, role: 'member' }] });
      const key = workspaceKey(person, workspace.id);
      expect((await t.request('GET', `/v1/admin/workspaces/${workspace.id}`, { key })).status).toBe(200);
      const removed = await t.request('DELETE', `/v1/admin/users/${person.id}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toMatchObject({ id: person.id, deleted: true });

      for (const used of [key, organisationKey(person)]) {
        const refused = await t.request('GET', `/v1/admin/workspaces/${workspace.id}`, { key: used });
        expect(refused.status).toBe(401);
        expect(refused.body.error.code).toBe('invalid_api_key');
      }
      expect((await t.request('GET', `/v1/admin/users/${person.id}`)).status).toBe(404);
      const members = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users`);
      expect(members.body.data.map((member: { user_id: string }) => member.user_id)).not.toContain(person.id);
      expect(await repository('WorkspaceMemberEntity').count({ where: { user_id: person.id } })).toBe(0);
      expect(await repository('ApiKeyEntity').count({ where: { user_id: person.id } })).toBe(0);
      // The address is free again.
      expect((await invite({ email: person.email, role: 'member' })).status).toBe(200);
    });
  });

  describe('workspaces', () => {
    it('a workspace without a slug gets one from its name; a taken slug answers 409', async () => {
      const name = `Research & Development ${unique('x')}`;
      const derived = await t.request('POST', '/v1/admin/workspaces', { body: { name } });
      expect(derived.status).toBe(200);
      expect(derived.body).toMatchObject({ object: 'workspace', name, status: 'active', is_default: 0 });
      expect(derived.body.slug).toMatch(/^research-development-/);
      const again = await t.request('POST', '/v1/admin/workspaces', { body: { name } });
      expect(again.status).toBe(200);
      expect(again.body.slug).not.toBe(derived.body.slug);

      const slug = unique('team');
      const explicit = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Team', slug } });
      expect(explicit.body.slug).toBe(slug);
      const taken = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Other', slug } });
      expect(taken.status).toBe(409);
      expect(taken.body.error).toMatchObject({ code: 'slug_taken', param: 'slug' });
      const badSlug = await t.request('POST', '/v1/admin/workspaces', {
        body: { name: 'B', slug: 'Not OK' },
      });
      expect(badSlug.status).toBe(400);
      expect(badSlug.body.error.param).toBe('slug');

      const bySlug = await t.request('GET', `/v1/admin/workspaces/${slug}`);
      expect(bySlug.body.id).toBe(explicit.body.id);
      const byId = await t.request('GET', `/v1/admin/workspaces/${explicit.body.id}`);
      expect(byId.body.slug).toBe(slug);
      expect((await t.request('GET', '/v1/admin/workspaces/nowhere')).status).toBe(404);
    });

    it('workspace creation with unknown users answers 404 and leaves nothing behind', async () => {
      const slug = unique('ghosts');
      const response = await t.request('POST', '/v1/admin/workspaces', {
        body: { name: 'Ghosts', slug, users: ['00000000-0000-4000-8000-000000000000'] },
      });
      expect(response.status).toBe(404);
      expect((await t.request('GET', `/v1/admin/workspaces/${slug}`)).status).toBe(404);
    });

    it('the name filter matches part of a name regardless of case, exact_name the whole name', async () => {
      const tag = unique('Zeta');
      const first = await createWorkspace({ name: `${tag} 50%_Off` });
      const second = await createWorkspace({ name: `${tag} Labs` });
      const ids = async (query: string) =>
        (await t.request('GET', `/v1/admin/workspaces?${query}`)).body.data
          .map((w: { id: string }) => w.id)
          .sort();
      expect(await ids(`name=${encodeURIComponent(tag)}`)).toEqual([first.id, second.id].sort());
      expect(await ids(`name=${encodeURIComponent(tag.toLowerCase())}`)).toEqual(
        [first.id, second.id].sort(),
      );
      expect(await ids(`name=${encodeURIComponent('0%_o')}`)).toEqual([first.id]);
      expect(await ids(`name=${encodeURIComponent('_')}`)).toEqual([first.id]);
      expect(await ids(`exact_name=${encodeURIComponent(`${tag} Labs`)}`)).toEqual([second.id]);
      expect(await ids(`exact_name=${encodeURIComponent(tag)}`)).toEqual([]);
    });

    it('the status filter takes comma-separated values; only organisation admins may list archived ones (403 otherwise)', async () => {
      const active = await createWorkspace();
      const archived = await createWorkspace();
      expect((await t.request('DELETE', `/v1/admin/workspaces/${archived.id}`)).status).toBe(200);
      const ids = async (query: string) => {
        const response = await t.request('GET', `/v1/admin/workspaces?page_size=100&${query}`);
        expect(response.status).toBe(200);
        return response.body.data.map((w: { id: string }) => w.id) as string[];
      };
      const byDefault = await ids('');
      expect(byDefault).toContain(active.id);
      expect(byDefault).not.toContain(archived.id);
      const onlyArchived = await ids('status=archived');
      expect(onlyArchived).toContain(archived.id);
      expect(onlyArchived).not.toContain(active.id);
      const both = await ids('status=active,archived');
      expect(both).toEqual(expect.arrayContaining([active.id, archived.id]));
      expect((await t.request('GET', '/v1/admin/workspaces?status=active,gone')).status).toBe(400);

      const admin = await onboard({ role: 'admin' });
      expect(
        (await t.request('GET', '/v1/admin/workspaces?status=archived', { key: organisationKey(admin) }))
          .status,
      ).toBe(200);
      const manager = await onboard({ workspaces: [{ id: active.id, role: 'manager' }] });
      const refused = await t.request('GET', '/v1/admin/workspaces?status=active,archived', {
        key: workspaceKey(manager, active.id),
      });
      expect(refused.status).toBe(403);
    });

    it('updating a workspace changes its fields, and api_key_policy round-trips', async () => {
      const workspace = await createWorkspace({
        api_key_policy: { max_user_keys_per_user: 3, default_expiry_days: 7, max_expiry_days: 30 },
        defaults: { metadata: { team: 'a' } },
      });
      const created = await t.request('GET', `/v1/admin/workspaces/${workspace.id}`);
      expect(created.body.api_key_policy).toEqual({
        max_user_keys_per_user: 3,
        default_expiry_days: 7,
        max_expiry_days: 30,
      });
      const updated = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}`, {
        body: {
          name: 'Renamed',
          description: 'about',
          defaults: { metadata: { team: 'b' } },
          usage_limits: [{ credit_limit: 100, type: 'cost', periodic_reset: 'monthly' }],
          rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
          api_key_policy: { max_expiry_days: 60 },
        },
      });
      expect(updated.status).toBe(200);
      const fetched = await t.request('GET', `/v1/admin/workspaces/${workspace.id}`);
      expect(fetched.body).toMatchObject({
        name: 'Renamed',
        description: 'about',
        defaults: { metadata: { team: 'b' } },
        usage_limits: [{ credit_limit: 100, type: 'cost', periodic_reset: 'monthly' }],
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
        api_key_policy: { max_user_keys_per_user: 3, default_expiry_days: 7, max_expiry_days: 60 },
      });
      const cleared = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}`, {
        body: { api_key_policy: { max_user_keys_per_user: null } },
      });
      expect(cleared.body.api_key_policy.max_user_keys_per_user).toBeNull();
      const invalid = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}`, {
        body: { api_key_policy: { max_expiry_days: 0 } },
      });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.param).toBe('api_key_policy.max_expiry_days');
    });

    it('deleting a workspace archives it; its keys then answer 401 workspace_archived', async () => {
      const workspace = await createWorkspace();
      const service = await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: 'svc', workspace_id: workspace.id, scopes: ['workspaces.read'] },
      });
      const person = await onboard({ workspaces: [{ id: workspace.id, role: 'manager' }] });
      const keys = [service.body.key, workspaceKey(person, workspace.id)];
      for (const key of keys)
        expect((await t.request('GET', `/v1/admin/workspaces/${workspace.id}`, { key })).status).toBe(200);

      const deleted = await t.request('DELETE', `/v1/admin/workspaces/${workspace.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toMatchObject({ object: 'workspace', deleted: true });
      const fetched = await t.request('GET', `/v1/admin/workspaces/${workspace.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body.status).toBe('archived');
      for (const key of keys) {
        const refused = await t.request('GET', `/v1/admin/workspaces/${workspace.id}`, { key });
        expect(refused.status).toBe(401);
        expect(refused.body.error.code).toBe('workspace_archived');
      }
      const newKey = await t.request('POST', '/v1/api-keys/workspace/service', {
        body: { name: 'late', workspace_id: workspace.id, scopes: [] },
      });
      expect(newKey.status).toBe(409);
      const newMember = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        body: { users: [{ id: ownerId, role: 'member' }] },
      });
      expect(newMember.status).toBe(409);
    });

    it('the default workspace cannot be archived (409)', async () => {
      const deleted = await t.request('DELETE', `/v1/admin/workspaces/${defaultWorkspaceId}`);
      expect(deleted.status).toBe(409);
      expect(deleted.body.error.code).toBe('default_workspace');
      const updated = await t.request('PUT', '/v1/admin/workspaces/default', {
        body: { status: 'archived' },
      });
      expect(updated.status).toBe(409);
      expect((await t.request('GET', '/v1/admin/workspaces/default')).body.status).toBe('active');
    });
  });

  describe('members', () => {
    it('adding a member: an unknown user answers 404, an existing member 409', async () => {
      const workspace = await createWorkspace();
      const person = await onboard();
      const added = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        body: { users: [{ id: person.id, role: 'member' }] },
      });
      expect(added.status).toBe(200);
      expect(added.body).toMatchObject({ workspace_id: workspace.id, added: 1 });
      const again = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        body: { users: [{ id: person.id, role: 'manager' }] },
      });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('member_exists');
      const unknown = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        body: { users: [{ id: '00000000-0000-4000-8000-000000000000', role: 'member' }] },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('user_not_found');
      const notAUuid = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        body: { users: [{ id: 'bob', role: 'member' }] },
      });
      expect(notAUuid.status).toBe(400);
      expect(notAUuid.body.error.param).toBe('users[0].id');
      const missingMember = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users/${ownerId}`);
      expect(missingMember.status).toBe(404);
    });

    it('members list filters by role and email and pages', async () => {
      const workspace = await createWorkspace();
      const manager = await onboard({ prefix: 'mgr', workspaces: [{ id: workspace.id, role: 'manager' }] });
      const member = await onboard({ prefix: 'mbr', workspaces: [{ id: workspace.id, role: 'member' }] });
      const ids = async (query: string) =>
        (await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users?${query}`)).body.data.map(
          (item: { user_id: string }) => item.user_id,
        );
      const all: string[] = await ids('');
      expect([...all].sort()).toEqual([manager.id, member.id].sort());
      expect(await ids('role=manager')).toEqual([manager.id]);
      expect(await ids(`email=${member.email.slice(0, 6).toUpperCase()}`)).toEqual([member.id]);
      const page = await t.request(
        'GET',
        `/v1/admin/workspaces/${workspace.id}/users?page_size=1&current_page=1`,
      );
      expect(page.body.total).toBe(2);
      expect(page.body.data.map((item: { user_id: string }) => item.user_id)).toEqual([all[1]]);
      const fetched = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users/${member.id}`);
      expect(fetched.body).toMatchObject({ user_id: member.id, role: 'member', email: member.email });
    });

    it('a workspace manager can change member roles but cannot grant admin (403)', async () => {
      const workspace = await createWorkspace();
      const manager = await onboard({ workspaces: [{ id: workspace.id, role: 'manager' }] });
      const member = await onboard({ workspaces: [{ id: workspace.id, role: 'member' }] });
      const outsider = await onboard();
      const key = workspaceKey(manager, workspace.id);
      const toAdmin = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${member.id}`, {
        key,
        body: { role: 'admin' },
      });
      expect(toAdmin.status).toBe(403);
      expect(toAdmin.body.error.code).toBe('role_not_grantable');
      const addAdmin = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        key,
        body: { users: [{ id: outsider.id, role: 'admin' }] },
      });
      expect(addAdmin.status).toBe(403);
      const toManager = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${member.id}`, {
        key,
        body: { role: 'manager' },
      });
      expect(toManager.status).toBe(200);
      expect(toManager.body.role).toBe('manager');
      const addMember = await t.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        key,
        body: { users: [{ id: outsider.id, role: 'member' }] },
      });
      expect(addMember.status).toBe(200);
      // An organisation admin may grant admin.
      const byAdmin = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${member.id}`, {
        body: { role: 'admin' },
      });
      expect(byAdmin.status).toBe(200);
      // ...and the manager may not demote or remove a workspace admin.
      const demote = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${member.id}`, {
        key,
        body: { role: 'member' },
      });
      expect(demote.status).toBe(403);
      const remove = await t.request('DELETE', `/v1/admin/workspaces/${workspace.id}/users/${member.id}`, {
        key,
      });
      expect(remove.status).toBe(403);
    });

    it("removing a member stops their workspace keys, and a member's role change reaches their key", async () => {
      const workspace = await createWorkspace();
      const person = await onboard({ workspaces: [{ id: workspace.id, role: 'manager' }] });
      const key = workspaceKey(person, workspace.id);
      const listMembers = () => t.request('GET', '/v1/api-keys', { key });
      expect((await listMembers()).status).toBe(200);
      await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${person.id}`, {
        body: { role: 'member' },
      });
      expect((await listMembers()).status).toBe(403);

      const removed = await t.request('DELETE', `/v1/admin/workspaces/${workspace.id}/users/${person.id}`);
      expect(removed.status).toBe(200);
      const refused = await t.request('GET', `/v1/admin/workspaces/${workspace.id}`, { key });
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('invalid_api_key');
      expect((await t.request('GET', `/v1/admin/workspaces/${workspace.id}/users/${person.id}`)).status).toBe(
        404,
      );
      // The user stays in the organisation.
      expect((await t.request('GET', `/v1/admin/users/${person.id}`)).status).toBe(200);
    });
  });

  describe('security settings', () => {
    const DEFAULTS = {
      membersViewAllData: true,
      managersViewAllData: true,
      membersViewPrompts: true,
      membersWritePrompts: false,
      managersViewPrompts: true,
      managersWritePrompts: true,
      membersViewAnalytics: true,
      managersViewAnalytics: true,
    };

    it("organisation security settings start at the spec's defaults", async () => {
      const response = await t.request('GET', '/v1/admin/security-settings');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ object: 'security-settings', ...DEFAULTS });
      const workspace = await createWorkspace();
      const scoped = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/security-settings`);
      expect(scoped.body).toEqual({
        object: 'workspace-security-settings',
        workspace_id: workspace.id,
        overrides: {},
        effective: DEFAULTS,
      });
    });

    it('organisation choices apply to every workspace; a workspace override wins, and null clears it', async () => {
      const workspace = await createWorkspace();
      const other = await createWorkspace();
      try {
        const organisation = await t.request('PUT', '/v1/admin/security-settings', {
          body: { membersWritePrompts: true, managersViewAnalytics: false },
        });
        expect(organisation.status).toBe(200);
        expect(organisation.body).toMatchObject({ membersWritePrompts: true, managersViewAnalytics: false });
        expect((await t.request('GET', '/v1/admin/security-settings')).body.membersWritePrompts).toBe(true);

        const override = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/security-settings`, {
          body: { membersWritePrompts: false, membersViewAllData: false },
        });
        expect(override.status).toBe(200);
        expect(override.body.overrides).toEqual({ membersWritePrompts: false, membersViewAllData: false });
        expect(override.body.effective).toEqual({
          ...DEFAULTS,
          membersWritePrompts: false,
          membersViewAllData: false,
          managersViewAnalytics: false,
        });
        const untouched = await t.request('GET', `/v1/admin/workspaces/${other.id}/security-settings`);
        expect(untouched.body.effective).toEqual({
          ...DEFAULTS,
          membersWritePrompts: true,
          managersViewAnalytics: false,
        });

        const cleared = await t.request('PUT', `/v1/admin/workspaces/${workspace.id}/security-settings`, {
          body: { membersWritePrompts: null },
        });
        expect(cleared.body.overrides).toEqual({ membersViewAllData: false });
        expect(cleared.body.effective.membersWritePrompts).toBe(true);

        const invalid = await t.request('PUT', '/v1/admin/security-settings', {
          body: { membersWritePrompts: 'yes' },
        });
        expect(invalid.status).toBe(400);
        expect(invalid.body.error.param).toBe('membersWritePrompts');
        const unknown = await t.request('PUT', '/v1/admin/security-settings', {
          body: { everyoneIsAdmin: true },
        });
        expect(unknown.status).toBe(400);
      } finally {
        await t.request('PUT', '/v1/admin/security-settings', {
          body: { membersWritePrompts: null, managersViewAnalytics: null },
        });
      }
      expect((await t.request('GET', '/v1/admin/security-settings')).body).toEqual({
        object: 'security-settings',
        ...DEFAULTS,
      });
    });

    it('workspace keys cannot read or change security settings', async () => {
      const workspace = await createWorkspace();
      const manager = await onboard({ workspaces: [{ id: workspace.id, role: 'manager' }] });
      const key = workspaceKey(manager, workspace.id);
      const read = await t.request('GET', `/v1/admin/workspaces/${workspace.id}/security-settings`, { key });
      expect(read.status).toBe(403);
      const write = await t.request('PUT', '/v1/admin/security-settings', {
        key,
        body: { membersViewPrompts: false },
      });
      expect(write.status).toBe(403);
    });
  });
});
