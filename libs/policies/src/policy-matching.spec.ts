import { MatchContext, PolicyMatcher, isPolicyKey } from './policy-matching';

const ORG = 'org-1';
const context = (over: Partial<MatchContext> = {}): MatchContext => ({
  organisationId: ORG,
  workspaceId: 'ws-1',
  apiKeyId: 'key-1',
  userId: 'user-1',
  metadata: {},
  ...over,
});

describe('policy matching', () => {
  it('accepts the four key forms and nothing else', () => {
    for (const key of [
      'api_key',
      'organisation_id',
      'workspace_id',
      'metadata.team',
      'metadata._user',
      'metadata.a.b-c',
    ])
      expect(isPolicyKey(key)).toBe(true);
    for (const key of ['user_id', 'metadata.', 'metadata', 'metadata.has space', 'API_KEY', 42, null])
      expect(isPolicyKey(key)).toBe(false);
  });

  it('applies only inside its organisation and workspace', () => {
    const matcher = new PolicyMatcher(
      ORG,
      'ws-1',
      [{ key: 'api_key', value: 'key-1' }],
      [{ key: 'api_key' }],
    );
    expect(matcher.matches(context())).toBe(true);
    expect(matcher.matches(context({ workspaceId: 'ws-2' }))).toBe(false);
    expect(matcher.matches(context({ organisationId: 'org-2' }))).toBe(false);
    expect(matcher.matches(context({ apiKeyId: 'key-2' }))).toBe(false);
  });

  it('an organisation-wide policy applies in every workspace', () => {
    const matcher = new PolicyMatcher(
      ORG,
      null,
      [{ key: 'organisation_id', value: ORG }],
      [{ key: 'workspace_id' }],
    );
    expect(matcher.matches(context({ workspaceId: 'ws-9' }))).toBe(true);
    expect(matcher.valueKey(context({ workspaceId: 'ws-9' }))).toBe('workspace_id:ws-9');
  });

  it('ANDs its conditions, metadata included', () => {
    const matcher = new PolicyMatcher(
      ORG,
      'ws-1',
      [
        { key: 'workspace_id', value: 'ws-1' },
        { key: 'metadata.team', value: 'search' },
      ],
      [{ key: 'api_key' }],
    );
    expect(matcher.matches(context({ metadata: { team: 'search' } }))).toBe(true);
    expect(matcher.matches(context({ metadata: { team: 'ads' } }))).toBe(false);
    expect(matcher.matches(context())).toBe(false);
  });

  it('groups by several keys, and skips a request missing a grouped field', () => {
    const matcher = new PolicyMatcher(
      ORG,
      'ws-1',
      [{ key: 'workspace_id', value: 'ws-1' }],
      [{ key: 'api_key' }, { key: 'metadata.team' }],
    );
    expect(matcher.valueKey(context({ metadata: { team: 'search' } }))).toBe(
      'api_key:key-1|metadata.team:search',
    );
    expect(matcher.groupValues(context({ metadata: { team: 'search' } }))).toEqual({
      api_key: 'key-1',
      'metadata.team': 'search',
    });
    expect(matcher.valueKey(context())).toBeNull();
  });

  it('metadata._user falls back to the calling user', () => {
    const matcher = new PolicyMatcher(
      ORG,
      'ws-1',
      [{ key: 'workspace_id', value: 'ws-1' }],
      [{ key: 'metadata._user' }],
    );
    expect(matcher.valueKey(context())).toBe('metadata._user:user-1');
    expect(matcher.valueKey(context({ metadata: { _user: 'alice' } }))).toBe('metadata._user:alice');
    expect(matcher.valueKey(context({ userId: null }))).toBeNull();
  });

  it('hashes very long value keys so they fit the index', () => {
    const matcher = new PolicyMatcher(
      ORG,
      null,
      [{ key: 'organisation_id', value: ORG }],
      [{ key: 'metadata.blob' }],
    );
    const key = matcher.valueKey(context({ metadata: { blob: 'x'.repeat(600) } }));
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
