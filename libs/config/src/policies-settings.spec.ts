import { loadPoliciesSettings } from './policies-settings';

describe('policies settings', () => {
  it('has working defaults: no SMTP, the standard prefix, one-second flushes', () => {
    expect(loadPoliciesSettings({})).toEqual({
      redisPrefix: 'switchboard:policies:',
      flushIntervalMs: 1000,
      reservationTtlMs: 900000,
      budgetTtlMs: 40 * 86_400_000,
      smtp: null,
    });
  });

  it('reads SMTP from a URL or from its parts', () => {
    expect(loadPoliciesSettings({ SMTP_URL: 'smtp://mail:2525', SMTP_FROM: 'ops@example.com' }).smtp).toEqual(
      {
        url: 'smtp://mail:2525',
        host: null,
        port: 587,
        secure: false,
        user: null,
        pass: null,
        from: 'ops@example.com',
      },
    );
    expect(
      loadPoliciesSettings({
        SMTP_HOST: 'mail',
        SMTP_PORT: '465',
        SMTP_SECURE: 'true',
        SMTP_USER: 'u',
        SMTP_PASS: 'p',
      }).smtp,
    ).toMatchObject({ host: 'mail', port: 465, secure: true, user: 'u', pass: 'p' });
  });

  it('lists every problem at once', () => {
    expect(() =>
      loadPoliciesSettings({
        SMTP_URL: 'http://mail',
        SMTP_HOST: 'mail',
        SMTP_PORT: 'x',
        SMTP_USER: 'u',
        GATEWAY_POLICY_FLUSH_MS: '5',
      }),
    ).toThrow(
      /GATEWAY_POLICY_FLUSH_MS[\s\S]*SMTP_URL must start[\s\S]*Set SMTP_URL or SMTP_HOST[\s\S]*SMTP_PORT[\s\S]*SMTP_USER and SMTP_PASS/,
    );
  });
});
