/**
 * Telling people about failures: the administrator e-mail over SMTP (nodemailer; a local SMTP
 * sink in development) and the error tracker (the Sentry SDK when SENTRY_DSN is set; otherwise
 * reports only go to the log). Used by the wallet handler in the gateway (injected through
 * AppDeps) and, as activities (activities/notifications.ts), by workflows. Whoever creates a
 * notifier closes it.
 */
import * as Sentry from '@sentry/node';
import nodemailer from 'nodemailer';
import type { Config } from './config';
import type { Logger } from './logger';

export interface AdminEmail {
  subject: string;
  text: string;
}

export interface ErrorReport {
  message: string;
  tags?: Record<string, string>;
  extra?: Record<string, unknown>;
}

export interface Notifier {
  /** Sends the e-mail to ADMIN_EMAIL; rejects when it cannot be sent. */
  sendAdminEmail(mail: AdminEmail): Promise<void>;
  /** Reports to the error tracker; resolves to the event id, or undefined without SENTRY_DSN. */
  reportError(report: ErrorReport): Promise<string | undefined>;
  close(): Promise<void>;
}

export function createNotifier({ config, logger }: { config: Config; logger: Logger }): Notifier {
  const { smtpUrl, adminEmail, from, timeoutMs } = config.mail;
  const transport = smtpUrl
    ? nodemailer.createTransport({
        url: smtpUrl,
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs * 2,
      } as never)
    : undefined;

  let sentry: { client: Sentry.NodeClient; scope: Sentry.Scope } | undefined;
  if (config.sentryDsn) {
    const client = new Sentry.NodeClient({
      dsn: config.sentryDsn,
      environment: config.env,
      integrations: [],
      stackParser: Sentry.defaultStackParser,
      transport: Sentry.makeNodeTransport,
    });
    client.init();
    const scope = new Sentry.Scope();
    scope.setClient(client);
    sentry = { client, scope };
  }

  return {
    async sendAdminEmail(mail) {
      if (!transport) throw new Error('SMTP_URL is not configured: the administrator e-mail cannot be sent');
      await transport.sendMail({ from, to: adminEmail, subject: mail.subject, text: mail.text });
    },
    async reportError(report) {
      logger.error({ tags: report.tags, extra: report.extra }, `error report: ${report.message}`);
      if (!sentry) return undefined;
      const scope = sentry.scope.clone();
      scope.setTags(report.tags ?? {});
      scope.setExtras(report.extra ?? {});
      const id = sentry.client.captureException(new Error(report.message), {}, scope);
      await sentry.client.flush(timeoutMs);
      return id;
    },
    async close() {
      transport?.close();
      await sentry?.client.close(timeoutMs);
    },
  };
}
