import nodemailer from 'nodemailer';
import type { SmtpConfig } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Outbound email through the configured SMTP server. `send` rejects when the server refuses or is unreachable. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export function createMailer(config: SmtpConfig): Mailer {
  const transport = nodemailer.createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    requireTLS: config.requireTls,
    auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
    // nodemailer counts the greeting inside connectionTimeout too; both bound the wait for a server that never greets.
    connectionTimeout: config.connectionTimeoutMs,
    greetingTimeout: config.connectionTimeoutMs,
    // Idle time only: a server answering a byte at a time never trips it, hence the deadline of the whole message.
    socketTimeout: config.socketTimeoutMs,
  });
  return {
    async send(message) {
      try {
        await transport.sendMail({
          from: config.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          // Aborting closes the message's SMTP connection.
          signal: AbortSignal.timeout(config.sendTimeoutMs),
        });
      } catch (error) {
        if ((error as { code?: unknown }).code === 'EABORT') {
          throw Object.assign(new Error(SEND_TIMED_OUT), { code: 'ETIMEDOUT' });
        }
        throw error;
      }
    },
  };
}

const SEND_TIMED_OUT = 'the message took longer than SMTP_SEND_TIMEOUT_SECONDS';

/** Whether an SMTP failure is a timeout: connecting, the greeting, an idle socket or the whole message. */
export function isMailTimeout(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'ETIMEDOUT';
}

/** Whether an SMTP failure is worth retrying: a 5xx reply is a permanent refusal, anything else may pass later. */
export function isPermanentMailError(error: unknown): boolean {
  const code = (error as { responseCode?: unknown }).responseCode;
  return typeof code === 'number' && code >= 500;
}
