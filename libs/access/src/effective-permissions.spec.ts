import { KEY_CAPABILITIES } from './capability-matrix';
import { effectivePermissions } from './effective-permissions';
import { PERMISSIONS } from './permissions';
import { validateKeyScopes } from './scopes';

const ALL = [...PERMISSIONS];

describe('capability matrix', () => {
  it('admin keys manage the organisation but cannot send traffic or give feedback', () => {
    const admin = KEY_CAPABILITIES['organisation-service'];
    for (const p of [
      'workspaces.create',
      'users.update',
      'organisation.update',
      'configs.create',
      'analytics.view',
    ] as const) {
      expect(admin.has(p)).toBe(true);
    }
    for (const p of ['feedback.create', 'feedback.update', 'completions.write'] as const)
      expect(admin.has(p)).toBe(false);
  });

  it('workspace keys manage their workspace resources but not the organisation', () => {
    const workspace = KEY_CAPABILITIES['workspace-service'];
    for (const p of [
      'configs.create',
      'providers.create',
      'analytics.view',
      'feedback.create',
      'completions.write',
    ] as const) {
      expect(workspace.has(p)).toBe(true);
    }
    for (const p of [
      'workspaces.create',
      'users.list',
      'organisation.update',
      'admin_api_keys.manage',
      'audit_logs.list',
    ] as const) {
      expect(workspace.has(p)).toBe(false);
    }
  });
});

describe('effectivePermissions', () => {
  it('narrows to the key scopes', () => {
    const permissions = effectivePermissions({
      keyType: 'workspace-service',
      scopes: ['logs.list', 'logs.view'],
    });
    expect([...permissions].sort()).toEqual(['logs.list', 'logs.view']);
  });

  it('a workspace member key cannot create keys or members even with every scope', () => {
    const permissions = effectivePermissions({
      keyType: 'workspace-user',
      scopes: ALL,
      organisationRole: 'member',
      workspaceRole: 'member',
    });
    expect(permissions.has('api_keys.create')).toBe(false);
    expect(permissions.has('workspace_members.create')).toBe(false);
    expect(permissions.has('completions.write')).toBe(true);
  });

  it('a workspace manager creates keys and manages members but does not update the workspace', () => {
    const permissions = effectivePermissions({
      keyType: 'workspace-user',
      scopes: ALL,
      organisationRole: 'member',
      workspaceRole: 'manager',
    });
    expect(permissions.has('api_keys.create')).toBe(true);
    expect(permissions.has('workspace_members.update')).toBe(true);
    expect(permissions.has('workspaces.update')).toBe(false);
  });

  it('workspace keys of managers and members list workspaces (the service filters to their own)', () => {
    expect(KEY_CAPABILITIES['workspace-service'].has('workspaces.list')).toBe(true);
    for (const workspaceRole of ['manager', 'member'] as const) {
      const permissions = effectivePermissions({
        keyType: 'workspace-user',
        scopes: ALL,
        organisationRole: 'member',
        workspaceRole,
      });
      expect(permissions.has('workspaces.list')).toBe(true);
      expect(permissions.has('workspaces.create')).toBe(false);
    }
  });

  it('a user key of someone no longer in the workspace has no permissions', () => {
    const permissions = effectivePermissions({
      keyType: 'workspace-user',
      scopes: ALL,
      organisationRole: 'member',
      workspaceRole: null,
    });
    expect(permissions.size).toBe(0);
  });

  it('an organisation member cannot hold admin powers through an organisation user key', () => {
    const permissions = effectivePermissions({
      keyType: 'organisation-user',
      scopes: ALL,
      organisationRole: 'member',
    });
    expect([...permissions]).toEqual(['organisation.read']);
  });

  it('owners and admins keep the whole admin capability', () => {
    for (const role of ['owner', 'admin'] as const) {
      const permissions = effectivePermissions({
        keyType: 'organisation-user',
        scopes: ALL,
        organisationRole: role,
      });
      expect(permissions).toEqual(new Set(KEY_CAPABILITIES['organisation-user']));
    }
  });
});

describe('validateKeyScopes', () => {
  it('names the unknown scope and its index', () => {
    expect(() => validateKeyScopes(['logs.list', 'logs.bogus'], 'workspace-service')).toThrow(
      expect.objectContaining({ status: 400, param: 'scopes[1]' }),
    );
  });

  it('refuses organisation scopes on workspace keys', () => {
    expect(() => validateKeyScopes(['workspaces.create'], 'workspace-user')).toThrow(
      /not available to workspace-user/,
    );
  });

  it('refuses to grant what the creator lacks', () => {
    expect(() => validateKeyScopes(['logs.export'], 'workspace-service', new Set(['logs.list']))).toThrow(
      expect.objectContaining({ status: 403, code: 'scope_not_grantable' }),
    );
  });

  it('accepts the spec scope names', () => {
    expect(() =>
      validateKeyScopes(
        ['logs.export', 'logs.list', 'logs.view', 'virtual_keys.create', 'virtual_keys.update', 'mcp.invoke'],
        'workspace-service',
      ),
    ).not.toThrow();
  });
});
