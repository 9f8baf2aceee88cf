import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { AppConfig } from '../../config/app-config';
import {
  invitationMail,
  MailContent,
  notificationMail,
  passwordResetMail,
  verificationMail,
} from './mail-templates';

/**
 * System e-mail through SMTP_URL. Without SMTP_URL each mail is written to the log instead
 * (development). A failed send is logged, never thrown: the caller's action stands and the
 * user can ask for the mail again.
 */
@Injectable()
export class MailService implements OnApplicationShutdown {
  private readonly logger = new Logger(MailService.name);
  private readonly transport?: Transporter;

  constructor(private readonly config: AppConfig) {
    if (config.env.SMTP_URL) this.transport = createTransport(config.env.SMTP_URL);
  }

  get mode(): 'smtp' | 'log' {
    return this.transport ? 'smtp' : 'log';
  }

  sendVerification(to: string, fullName: string, token: string): Promise<void> {
    return this.send(to, verificationMail(fullName, this.link('/verify-email', token)));
  }

  sendUserPasswordReset(to: string, fullName: string, token: string): Promise<void> {
    return this.send(to, passwordResetMail(fullName, this.link('/reset-password', token)));
  }

  sendAdminPasswordReset(to: string, fullName: string, token: string): Promise<void> {
    return this.send(to, passwordResetMail(fullName, this.link('/admin/reset-password', token)));
  }

  sendInvitation(to: string, fullName: string, companyName: string, token: string): Promise<void> {
    return this.send(to, invitationMail(fullName, companyName, this.link('/accept-invite', token)));
  }

  /** `path` (optional) is a page of the front end, e.g. `/billing/<uuid>`. */
  sendNotification(to: string, title: string, body: string, path?: string): Promise<void> {
    const link = path ? { url: `${this.config.appUrl}${path}`, label: 'Open' } : undefined;
    return this.send(to, notificationMail(title, body, link));
  }

  private link(path: string, token: string): string {
    return `${this.config.appUrl}${path}?token=${encodeURIComponent(token)}`;
  }

  private async send(to: string, content: MailContent): Promise<void> {
    if (!this.transport) {
      // Without SMTP the mail goes to the log so its link can be followed in development; in
      // production the link (a credential) is left out and only the fact of the mail is logged.
      const text = this.config.isProduction ? undefined : content.text;
      this.logger.log({ mail: { to, subject: content.subject, text } }, 'E-mail not sent: SMTP_URL is unset');
      return;
    }
    try {
      await this.transport.sendMail({ from: this.config.env.MAIL_FROM, to, ...content });
    } catch (e) {
      this.logger.error({ err: e, to, subject: content.subject }, 'E-mail could not be sent');
    }
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}
