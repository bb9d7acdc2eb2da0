import Redis from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { DataSource } from 'typeorm';
import { BudgetAlerts, EnforcementContext, InlineLimits, PolicyEnforcer } from '@switchboard/policies';
import { enforcementContexts } from '../support/policies';
import { TestApp, describeE2E, startTestApp } from '../support/test-app';

interface Mail {
  to: string[];
  subject: string;
  body: string;
}

/**
 * Budget alerts by e-mail, through a real SMTP server on a local port: who receives them, what
 * they say, once per period, and re-armed by a raised limit or threshold.
 */
describeE2E('policies: budget alert e-mails', () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const mails: Mail[] = [];
  let organisationId: string;
  let workspaceId: string;
  const prefix = `sbtest:alerts:${randomBytes(4).toString('hex')}:`;
  const people: Record<string, string> = {};

  const enforcer = () => t.app.get(PolicyEnforcer);
  const context = enforcementContexts(() => ({ organisationId, workspaceId }));
  async function spend(input: EnforcementContext, tokens: number) {
    await enforcer().settle(await enforcer().check(input), { tokens });
    await t.app.get(BudgetAlerts).idle();
  }
  /** Mails arrive over SMTP after the alert is claimed; wait for exactly `count` in all. */
  async function mailCount(count: number) {
    const deadline = Date.now() + 5000;
    while (mails.length < count && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 150)); // and no extra one behind them
    expect(mails.length).toBe(count);
  }

  async function invite(email: string, role: 'admin' | 'member', workspaces: { id: string; role: string }[]) {
    const invitation = await t.request('POST', '/v1/admin/users/invites', {
      body: { email, role, workspaces },
    });
    expect(invitation.status).toBe(200);
    const accepted = await t.request('POST', '/v1/invites/accept', {
      key: null,
      body: { token: invitation.body.token },
    });
    expect(accepted.status).toBe(200);
    people[email] = accepted.body.user.id;
  }

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        let raw = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => (raw += chunk));
        stream.on('end', () => {
          const [head, ...rest] = raw.split(/\r?\n\r?\n/);
          const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
          mails.push({
            to: session.envelope.rcptTo.map((recipient) => recipient.address).sort(),
            subject: /^Subject: (.*)$/m.exec(unfolded)?.[1] ?? '',
            body: rest.join('\n\n').replace(/=\r?\n/g, ''),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await startTestApp({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      SMTP_FROM: 'Switchboard alerts <alerts@switchboard.test>',
      GATEWAY_POLICY_REDIS_PREFIX: prefix,
    });
    [{ id: organisationId }] = await t.app.get(DataSource).query('SELECT id FROM organisations');
    workspaceId = (await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Alerts W' } })).body.id;
    const otherWorkspace = (await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Alerts W2' } }))
      .body.id;
    await invite('org-admin@example.test', 'admin', []);
    await invite('ws-admin@example.test', 'member', [{ id: workspaceId, role: 'admin' }]);
    await invite('ws-manager@example.test', 'member', [{ id: workspaceId, role: 'manager' }]);
    await invite('ws-member@example.test', 'member', [{ id: workspaceId, role: 'member' }]);
    await invite('elsewhere-manager@example.test', 'member', [{ id: otherWorkspace, role: 'manager' }]);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  const EXPECTED_RECIPIENTS = [
    'org-admin@example.test',
    'owner@localhost',
    'ws-admin@example.test',
    'ws-manager@example.test',
  ];

  it('the recipients are the workspace admins and managers and the organisation owners and admins', async () => {
    expect(await t.app.get(BudgetAlerts).recipients(organisationId, workspaceId)).toEqual(
      EXPECTED_RECIPIENTS,
    );
    expect(await t.app.get(BudgetAlerts).recipients(organisationId, null)).toEqual([
      'org-admin@example.test',
      'owner@localhost',
    ]);
  });

  it('threshold then exhausted alerts, once per period, re-armed by a raised threshold or credit limit', async () => {
    const created = await t.request('POST', '/v1/policies/usage-limits', {
      body: {
        name: 'Team tokens',
        conditions: [{ key: 'workspace_id', value: workspaceId }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 10,
        alert_threshold: 6,
        workspace_id: workspaceId,
      },
    });
    const id = created.body.id as string;
    const apiKeyId = randomUUID();
    const start = mails.length;

    await spend(context({ apiKeyId }), 4);
    await mailCount(start);
    await spend(context({ apiKeyId }), 3); // 7: past the threshold
    await mailCount(start + 1);
    expect(mails[start]).toMatchObject({ to: EXPECTED_RECIPIENTS });
    expect(mails[start].subject).toBe(
      `[Switchboard] Alert threshold reached: Usage limit policy 'Team tokens' (${id})`,
    );
    expect(mails[start].body).toContain(`for api_key:${apiKeyId}`);
    expect(mails[start].body).toContain('Used: 7 tokens of 10 tokens (alert threshold 6 tokens).');

    await spend(context({ apiKeyId }), 1); // 8: no second threshold mail
    await mailCount(start + 1);
    await spend(context({ apiKeyId }), 3); // 11: exhausted
    await mailCount(start + 2);
    expect(mails[start + 1].subject).toBe(
      `[Switchboard] Budget exhausted: Usage limit policy 'Team tokens' (${id})`,
    );
    expect(mails[start + 1].to).toEqual(EXPECTED_RECIPIENTS);
    expect(mails[start + 1].body).toContain('Used: 11 tokens of 10 tokens.');
    const flags = async () =>
      (await t.request('GET', `/v1/policies/usage-limits/${id}/entities`)).body.data.map(
        (entity: { is_threshold_alerts_sent: boolean; is_exhausted_alerts_sent: boolean }) => [
          entity.is_threshold_alerts_sent,
          entity.is_exhausted_alerts_sent,
        ],
      );
    expect(await flags()).toEqual([[true, true]]);

    // Raising the threshold re-arms only the threshold alert.
    await t.request('PUT', `/v1/policies/usage-limits/${id}`, { body: { alert_threshold: 8 } });
    expect(await flags()).toEqual([[false, true]]);
    // Raising the credit limit reactivates and re-arms both; the next request crosses the threshold again.
    await t.request('PUT', `/v1/policies/usage-limits/${id}`, { body: { credit_limit: 20 } });
    expect(await flags()).toEqual([[false, false]]);
    await spend(context({ apiKeyId }), 1); // 12 of 20, threshold 8
    await mailCount(start + 3);
    expect(mails[start + 2].subject).toContain('Alert threshold reached');
    expect(mails[start + 2].body).toContain('Used: 12 tokens of 20 tokens (alert threshold 8 tokens).');

    // Clearing the threshold re-arms it (nothing to send without one); a manual reset re-arms all.
    await t.request('PUT', `/v1/policies/usage-limits/${id}`, { body: { alert_threshold: null } });
    expect(await flags()).toEqual([[false, false]]);
    await spend(context({ apiKeyId }), 8); // 20 of 20: exhausted
    await mailCount(start + 4);
    expect(mails[start + 3].subject).toContain('Budget exhausted');
    await t.request('PUT', `/v1/policies/usage-limits/${id}`, {
      body: { reset_usage_for_value: `api_key:${apiKeyId}` },
    });
    expect(await flags()).toEqual([[false, false]]);
    await spend(context({ apiKeyId }), 20);
    await mailCount(start + 5);
  });

  it("an API key's budget alerts its alert_emails too, and a cost budget reads in dollars", async () => {
    const apiKeyId = randomUUID();
    const inline: InlineLimits = {
      kind: 'api_key',
      id: apiKeyId,
      name: 'reporting key',
      workspaceId,
      usageLimits: { credit_limit: 2, type: 'cost', alert_threshold: 1, periodic_reset: 'monthly' },
      alertEmails: ['Finance@Example.test'],
    };
    const start = mails.length;
    await enforcer().settle(await enforcer().check(context({ apiKeyId, inline: [inline] })), { cost: 1.5 });
    await t.app.get(BudgetAlerts).idle();
    await mailCount(start + 1);
    expect(mails[start].to).toEqual([...EXPECTED_RECIPIENTS, 'finance@example.test'].sort());
    expect(mails[start].subject).toBe(
      `[Switchboard] Alert threshold reached: The budget of api key 'reporting key' (${apiKeyId})`,
    );
    expect(mails[start].body).toContain('Used: $1.5 of $2 (alert threshold $1).');
    expect(mails[start].body).toMatch(/It resets at \d{4}-\d\d-01T00:00:00\.000Z\./);
  });

  it('an exhausted workspace budget is active again once its credit limit is raised, and its alerts re-arm', async () => {
    const budget = (creditLimit: number): InlineLimits => ({
      kind: 'workspace',
      id: workspaceId,
      name: 'Alerts W',
      workspaceId,
      usageLimits: [{ credit_limit: creditLimit, type: 'tokens', alert_threshold: 2 }],
    });
    const start = mails.length;
    await spend(context({ inline: [budget(3)] }), 3);
    await mailCount(start + 2); // past the threshold and at the limit in one settlement
    // Both alerts are raised by one settlement and sent side by side: their order may vary.
    expect(
      mails
        .slice(start)
        .map((mail) => mail.subject)
        .sort(),
    ).toEqual([
      `[Switchboard] Alert threshold reached: The budget of workspace 'Alerts W' (${workspaceId})`,
      `[Switchboard] Budget exhausted: The budget of workspace 'Alerts W' (${workspaceId})`,
    ]);
    await expect(enforcer().check(context({ inline: [budget(3)] }))).rejects.toMatchObject({
      status: 412,
      code: 'budget_exhausted',
    });
    // The workspace was edited: the next request carries the raised limit. No manual step.
    await spend(context({ inline: [budget(6)] }), 1);
    await mailCount(start + 3);
    expect(mails[start + 2].body).toContain('Used: 4 tokens of 6 tokens (alert threshold 2 tokens).');
    await spend(context({ inline: [budget(6)] }), 2);
    await mailCount(start + 4);
    expect(mails[start + 3].subject).toContain('Budget exhausted');
  });
});
