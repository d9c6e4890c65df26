/**
 * A local SMTP sink (smtp-server) on loopback: what `npm start` gives the administrator e-mail
 * in development when SMTP_URL is unset (messages are written as .eml files under
 * DATA_DIR/mail), and what the tests read e-mails from. `rejecting: true` answers every message
 * with 550, to test a failing mail server.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SunkMail {
  from: string;
  to: string[];
  subject: string;
  /** the body, quoted-printable decoded */
  text: string;
  raw: string;
}

export interface SmtpSink {
  url: string;
  messages: SunkMail[];
  stop(): Promise<void>;
}

const decodeQuotedPrintable = (s: string): string =>
  Buffer.from(
    s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');

const headerOf = (raw: string, name: string): string => {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
};

export async function startSmtpSink(
  opts: { port?: number; dir?: string; rejecting?: boolean; onMail?: (m: SunkMail) => void } = {},
): Promise<SmtpSink> {
  const messages: SunkMail[] = [];
  if (opts.dir) fs.mkdirSync(opts.dir, { recursive: true });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    banner: 'Talat development SMTP sink',
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (opts.rejecting)
          return callback(
            Object.assign(new Error('mailbox unavailable (test sink rejects every message)'), { responseCode: 550 }),
          );
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: SunkMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: headerOf(raw, 'Subject'),
          text: (() => {
            const body = raw
              .split(/\r?\n\r?\n/)
              .slice(1)
              .join('\n\n');
            return /quoted-printable/i.test(headerOf(raw, 'Content-Transfer-Encoding'))
              ? decodeQuotedPrintable(body)
              : body;
          })(),
          raw,
        };
        messages.push(mail);
        if (opts.dir)
          fs.writeFileSync(
            path.join(opts.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${messages.length}.eml`),
            raw,
          );
        opts.onMail?.(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
