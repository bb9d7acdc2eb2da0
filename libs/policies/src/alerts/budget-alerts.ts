import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { UsageLimitCounterEntity } from '../entities/usage-limit-counter.entity';
import { AlertMailer } from './alert-mailer';

export type AlertKind = 'threshold' | 'exhausted';

export interface BudgetAlert {
  kind: AlertKind;
  rowId: string;
  epoch: number;
  organisationId: string;
  /** Whose admins and managers hear about it; null for organisation-wide budgets. */
  workspaceId: string | null;
  /** e.g. `usage limit policy 'Team cap' (…)` or `the budget of API key …`. */
  label: string;
  valueKey: string;
  type: 'cost' | 'tokens';
  used: number;
  limit: number;
  threshold: number | null;
  resetsAt: Date | null;
  /** Extra addresses (an API key's `alert_emails`). */
  extraEmails: readonly string[];
}

const ATTEMPTS = 3;

/**
 * Threshold and exhausted alerts, once per period. The flag on the counter row is set with a
 * conditional update (`… WHERE epoch = ? AND flag = false`): of all the replicas and requests
 * that see the crossing, exactly one changes the row, and only that one sends the mail. A reset
 * (new epoch) or a raised limit clears the flags, which re-arms the alerts.
 */
@Injectable()
export class BudgetAlerts implements BeforeApplicationShutdown {
  private readonly logger = new Logger(BudgetAlerts.name);
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly mailer: AlertMailer,
  ) {}

  /** Fire and forget; `idle()` waits for what was started (shutdown, tests). */
  raise(alert: BudgetAlert): void {
    const task = this.deliver(alert)
      .catch((error: Error) => this.logger.error(`Budget alert failed: ${error.message}`))
      .finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Alerts already claimed in the database are sent before the process goes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.idle();
  }

  /** Organisation owners and admins, and the admins and managers of the workspace. */
  async recipients(organisationId: string, workspaceId: string | null): Promise<string[]> {
    const admins = await this.dataSource
      .createQueryBuilder()
      .select('u.email', 'email')
      .from('users', 'u')
      .where('u.organisation_id = :organisationId', { organisationId })
      .andWhere('u.role IN (:...roles)', { roles: ['owner', 'admin'] })
      .getRawMany<{ email: string }>();
    const managers = workspaceId
      ? await this.dataSource
          .createQueryBuilder()
          .select('u.email', 'email')
          .from('users', 'u')
          .innerJoin('workspace_members', 'm', 'm.user_id = u.id')
          .where('m.workspace_id = :workspaceId', { workspaceId })
          .andWhere('u.organisation_id = :organisationId', { organisationId })
          .andWhere('m.role IN (:...roles)', { roles: ['admin', 'manager'] })
          .getRawMany<{ email: string }>()
      : [];
    return [...new Set([...admins, ...managers].map((row) => row.email.toLowerCase()))].sort();
  }

  private async deliver(alert: BudgetAlert): Promise<void> {
    const flag = alert.kind === 'threshold' ? 'threshold_alert_sent' : 'exhausted_alert_sent';
    const changes: Partial<UsageLimitCounterEntity> = { [flag]: true };
    if (alert.kind === 'exhausted') changes.status = 'exhausted';
    const claimed = await this.dataSource
      .getRepository(UsageLimitCounterEntity)
      .update({ id: alert.rowId, epoch: alert.epoch, [flag]: false }, changes);
    if ((claimed.affected ?? 0) === 0) return;

    const to = [
      ...new Set([
        ...(await this.recipients(alert.organisationId, alert.workspaceId)),
        ...alert.extraEmails.map((email) => email.toLowerCase()),
      ]),
    ];
    if (to.length === 0) {
      this.logger.warn(`No one to tell: ${alert.label} ${alert.kind} for ${alert.valueKey}`);
      return;
    }
    const mail = compose(alert, to);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.mailer.send(mail);
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
    }
  }
}

function amount(type: 'cost' | 'tokens', value: number): string {
  return type === 'cost' ? `$${Number(value.toFixed(6))}` : `${Math.round(value)} tokens`;
}

export function compose(alert: BudgetAlert, to: string[]) {
  const reset = alert.resetsAt
    ? `It resets at ${alert.resetsAt.toISOString()}.`
    : 'It does not reset by itself: raise the limit or reset the usage.';
  if (alert.kind === 'threshold') {
    return {
      to,
      subject: `[Switchboard] Alert threshold reached: ${alert.label}`,
      text:
        `${alert.label} has reached its alert threshold for ${alert.valueKey}.\n\n` +
        `Used: ${amount(alert.type, alert.used)} of ${amount(alert.type, alert.limit)} ` +
        `(alert threshold ${amount(alert.type, alert.threshold ?? 0)}).\n${reset}\n`,
    };
  }
  return {
    to,
    subject: `[Switchboard] Budget exhausted: ${alert.label}`,
    text:
      `${alert.label} is exhausted for ${alert.valueKey}: further requests are refused.\n\n` +
      `Used: ${amount(alert.type, alert.used)} of ${amount(alert.type, alert.limit)}.\n${reset}\n`,
  };
}
