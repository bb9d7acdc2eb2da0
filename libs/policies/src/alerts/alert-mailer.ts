import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import { smtpTransport } from '@switchboard/common';
import { POLICIES_SETTINGS, PoliciesSettings } from '../policies.settings';

export interface AlertMail {
  to: string[];
  subject: string;
  text: string;
}

/** Sends alert e-mails over SMTP (nodemailer); without SMTP settings it logs what it would send. */
@Injectable()
export class AlertMailer implements OnModuleDestroy {
  private readonly logger = new Logger(AlertMailer.name);
  private readonly transport: Transporter | null;

  constructor(@Inject(POLICIES_SETTINGS) private readonly settings: PoliciesSettings) {
    const smtp = settings.smtp;
    if (!smtp) {
      this.transport = null;
      return;
    }
    this.transport = smtp.url
      ? smtpTransport(smtp.url)
      : smtpTransport({
          host: smtp.host ?? undefined,
          port: smtp.port,
          secure: smtp.secure,
          auth: smtp.user ? { user: smtp.user, pass: smtp.pass ?? '' } : undefined,
        });
  }

  get configured(): boolean {
    return this.transport !== null;
  }

  async send(mail: AlertMail): Promise<void> {
    if (!this.transport || !this.settings.smtp) {
      this.logger.warn(
        `SMTP is not configured; alert not e-mailed to ${mail.to.join(', ')}: ${mail.subject}`,
      );
      return;
    }
    await this.transport.sendMail({
      from: this.settings.smtp.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
    });
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }
}
