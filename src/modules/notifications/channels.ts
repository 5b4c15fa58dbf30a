import { isMailTimeout, isPermanentMailError, type Mailer } from '../../platform/mailer.js';
import type { RenderedMessage } from './messages.js';

export const CHANNELS = ['email', 'chat_webhook'] as const;
export type ChannelName = (typeof CHANNELS)[number];

/** A failed delivery attempt; permanent ones are not retried (a refused address, a 404 webhook). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export interface WebhookPolicy {
  /** Exact host names, or `*.example.com` for any subdomain. */
  allowedHosts: string[];
  allowHttp: boolean;
  timeoutMs: number;
}

/**
 * The service POSTs to user-supplied URLs, so only chat hosts the deployment allows are accepted: a URL naming an
 * internal address would otherwise turn the notifier into a proxy into the private network.
 */
export function webhookUrlAllowed(raw: string, policy: WebhookPolicy): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) return false;
  if (url.username || url.password) return false;
  const host = url.hostname.toLowerCase();
  return policy.allowedHosts.some((allowed) => (allowed.startsWith('*.') ? host.endsWith(allowed.slice(1)) : host === allowed));
}

/** Webhook URLs carry their secret in the path: only scheme and host are ever shown. */
export function maskWebhookUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}/…`;
  } catch {
    return '…';
  }
}

const MAX_ERROR_LENGTH = 300;

export async function postToChat(url: string, message: RenderedMessage, policy: WebhookPolicy): Promise<void> {
  if (!webhookUrlAllowed(url, policy)) throw new DeliveryError('The chat webhook URL is not on an allowed host', true);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Slack, Mattermost, Google Chat and Teams incoming webhooks all read `text`.
      body: JSON.stringify({ text: `*${message.subject}*\n${message.text}` }),
      // A redirect could lead off the allowed hosts.
      redirect: 'manual',
      signal: AbortSignal.timeout(policy.timeoutMs),
    });
  } catch (error) {
    throw new DeliveryError((error as Error).name === 'TimeoutError' ? 'The chat webhook timed out' : 'Could not connect to the chat webhook', false);
  }
  await response.body?.cancel();
  if (response.ok) return;
  const transient = response.status >= 500 || response.status === 408 || response.status === 429;
  throw new DeliveryError(`The chat webhook answered HTTP ${response.status}`, !transient);
}

/** The delivery error of an SMTP timeout, followed by which wait ran out (in parentheses). */
export const MAIL_TIMED_OUT = 'The SMTP server timed out';

export async function sendEmail(mailer: Mailer | undefined, to: string, message: RenderedMessage): Promise<void> {
  if (!mailer) throw new DeliveryError('Email is not configured on this server (SMTP_HOST)', true);
  try {
    await mailer.send({ to, subject: message.subject, text: message.text });
  } catch (error) {
    const reason = String((error as Error).message ?? error);
    const text = isMailTimeout(error) ? `${MAIL_TIMED_OUT} (${reason})` : reason;
    throw new DeliveryError(text.slice(0, MAX_ERROR_LENGTH), isPermanentMailError(error));
  }
}
