import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/client.js';
import type { NotificationPreferencesRow } from '../../db/schema/notifications.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, TooManyRequests, Unprocessable } from '../../platform/errors.js';
import type { Mailer } from '../../platform/mailer.js';
import type { UsersService } from '../users/service.js';
import { DeliveryError, maskWebhookUrl, postToChat, sendEmail, webhookUrlAllowed, type ChannelName, type WebhookPolicy } from './channels.js';
import { render, TEST_MESSAGE, type NotificationKind, type NotificationPayloads, type RenderedMessage } from './messages.js';
import type {
  AdminPreferencesView,
  DeliveryLogQuery,
  DeliveryOutcome,
  DeliveryView,
  PreferencesUpdate,
  PreferencesView,
} from './schemas.js';
import * as store from './store.js';

export const WEBHOOK_URL_REQUIRED = 'chat_webhook_url is required when chat_webhook_enabled is true';
export const WEBHOOK_URL_NOT_ALLOWED = 'chat_webhook_url must be an https URL on an allowed chat host';
export const TEST_EMAIL_LIMIT = 'Too many test emails to an address other than your account\'s. Try again later.';
const UNVERIFIED_TEST_EMAILS_PER_HOUR = 5;
const UNVERIFIED_TEST_WINDOW_MS = 3_600_000;
export const EMAIL_ADDRESS_REQUIRED = 'email_address is required: the account has no email address';
export const NO_CHANNEL_ENABLED = 'No notification channel is enabled; enable email or chat webhook in your preferences first';
export const CHANNEL_NOT_ENABLED = 'That channel is not enabled in your preferences';

const MAX_BACKOFF_MS = 60_000;

export interface NotificationsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  users: UsersService;
  mailer: Mailer | undefined;
  webhooks: WebhookPolicy;
  retry: { maxAttempts: number; baseDelayMs: number };
  onError: (error: unknown) => void;
}

interface Recipient {
  userId: string;
  channel: ChannelName;
  /** Email address or webhook URL. */
  address: string;
}

function defaults(userId: string): NotificationPreferencesRow {
  return {
    userId,
    emailEnabled: false,
    emailAddress: null,
    chatWebhookEnabled: false,
    chatWebhookUrl: null,
    events: [],
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
}

/** The stored preferences (also what the audit log records); the routes add the server's email_configured. */
function toView(row: NotificationPreferencesRow, saved: boolean): Omit<PreferencesView, 'email_configured'> {
  return {
    user_id: row.userId,
    email_enabled: row.emailEnabled,
    email_address: row.emailAddress,
    chat_webhook_enabled: row.chatWebhookEnabled,
    chat_webhook_url: row.chatWebhookUrl ? maskWebhookUrl(row.chatWebhookUrl) : null,
    events: row.events as PreferencesView['events'],
    updated_at: saved ? row.updatedAt.toISOString() : null,
  };
}

const shownTarget = (recipient: Recipient) => (recipient.channel === 'email' ? recipient.address : maskWebhookUrl(recipient.address));

export type NotificationsService = ReturnType<typeof createNotificationsService>;

/**
 * Alerts by email (SMTP) and chat webhook. Each message to each channel is tried up to maxAttempts times with
 * exponential backoff (base, 2×base, 4×base … capped at a minute); every attempt is logged with its outcome.
 */
export function createNotificationsService(deps: NotificationsDeps) {
  const { db } = deps;

  function recipientsOf(row: NotificationPreferencesRow, accountEmail: string | null, only?: ChannelName): Recipient[] {
    const out: Recipient[] = [];
    const email = row.emailAddress ?? accountEmail;
    if (row.emailEnabled && email && (!only || only === 'email')) out.push({ userId: row.userId, channel: 'email', address: email });
    if (row.chatWebhookEnabled && row.chatWebhookUrl && (!only || only === 'chat_webhook')) {
      out.push({ userId: row.userId, channel: 'chat_webhook', address: row.chatWebhookUrl });
    }
    return out;
  }

  async function deliver(recipient: Recipient, kind: string, message: RenderedMessage): Promise<DeliveryOutcome> {
    const notificationId = randomUUID();
    const target = shownTarget(recipient);
    let attempt = 0;
    for (;;) {
      attempt += 1;
      let error: DeliveryError | undefined;
      try {
        if (recipient.channel === 'email') await sendEmail(deps.mailer, recipient.address, message);
        else await postToChat(recipient.address, message, deps.webhooks);
      } catch (caught) {
        error = caught instanceof DeliveryError ? caught : new DeliveryError('Delivery failed', false);
      }
      await store.insertDelivery(db, {
        id: randomUUID(),
        notificationId,
        userId: recipient.userId,
        kind,
        channel: recipient.channel,
        target,
        attempt,
        status: error ? 'failed' : 'sent',
        error: error?.message ?? null,
        createdAt: deps.clock.now(),
      });
      const done = !error || error.permanent || attempt >= deps.retry.maxAttempts;
      if (done) {
        return { notification_id: notificationId, channel: recipient.channel, target, status: error ? 'failed' : 'sent', attempts: attempt, error: error?.message ?? null };
      }
      await sleep(Math.min(deps.retry.baseDelayMs * 2 ** (attempt - 1), MAX_BACKOFF_MS));
    }
  }

  function checkUpdate(next: NotificationPreferencesRow, accountEmail: string | null): void {
    if (next.chatWebhookEnabled && !next.chatWebhookUrl) {
      throw new Unprocessable({ type: 'value_error', loc: ['body', 'chat_webhook_url'], msg: WEBHOOK_URL_REQUIRED });
    }
    if (next.chatWebhookUrl && !webhookUrlAllowed(next.chatWebhookUrl, deps.webhooks)) {
      throw new Unprocessable({ type: 'value_error', loc: ['body', 'chat_webhook_url'], msg: WEBHOOK_URL_NOT_ALLOWED });
    }
    if (next.emailEnabled && !(next.emailAddress ?? accountEmail)) {
      throw new Unprocessable({ type: 'value_error', loc: ['body', 'email_address'], msg: EMAIL_ADDRESS_REQUIRED });
    }
  }


  /** Alerts started by notify and not yet delivered (drain awaits them). */
  const inFlight = new Set<Promise<DeliveryOutcome[]>>();

  async function alert<K extends NotificationKind>(kind: K, payload: NotificationPayloads[K]): Promise<DeliveryOutcome[]> {
    try {
      const message = render(kind, payload);
      const subscribers = await store.subscribersOf(db, kind);
      const recipients: Recipient[] = [];
      for (const row of subscribers) {
        const user = await deps.users.get(row.userId).catch(() => undefined);
        if (user?.is_active) recipients.push(...recipientsOf(row, user.email));
      }
      return await Promise.all(recipients.map((r) => deliver(r, kind, message)));
    } catch (error) {
      deps.onError(error);
      return [];
    }
  }

  const emailConfigured = deps.mailer !== undefined;
  const shown = (row: NotificationPreferencesRow, saved: boolean): PreferencesView => ({ ...toView(row, saved), email_configured: emailConfigured });

  return {
    async preferences(actor: Actor): Promise<PreferencesView> {
      const row = await store.findPreferences(db, actor.id);
      return shown(row ?? defaults(actor.id), row !== undefined);
    },

    async updatePreferences(actor: Actor, body: PreferencesUpdate): Promise<PreferencesView> {
      return db.transaction(async (tx) => {
        const current = await store.findPreferences(tx, actor.id, true);
        const base = current ?? defaults(actor.id);
        const now = deps.clock.now();
        const next: NotificationPreferencesRow = {
          userId: actor.id,
          emailEnabled: body.email_enabled ?? base.emailEnabled,
          emailAddress: body.email_address === undefined ? base.emailAddress : body.email_address,
          chatWebhookEnabled: body.chat_webhook_enabled ?? base.chatWebhookEnabled,
          chatWebhookUrl: body.chat_webhook_url === undefined ? base.chatWebhookUrl : body.chat_webhook_url,
          events: body.events ?? base.events,
          createdAt: current?.createdAt ?? now,
          updatedAt: now,
        };
        checkUpdate(next, actor.email);
        const saved = await store.upsertPreferences(tx, next);
        await deps.audit.record(tx, actor, {
          action: 'notification_preferences_update',
          entityType: 'notification_preferences',
          entityId: actor.id,
          before: current ? toView(current, true) : null,
          after: toView(saved, true),
        });
        return shown(saved, true);
      });
    },

    async adminPreferences(skip: number, limit: number) {
      const { rows, total } = await store.listPreferences(db, skip, limit);
      const items: AdminPreferencesView[] = await Promise.all(
        rows.map(async (row) => {
          const user = await deps.users.get(row.userId).catch(() => undefined);
          return { ...shown(row, true), username: user?.username ?? null };
        }),
      );
      return { items, total, skip, limit };
    },

    async deliveryLog(query: DeliveryLogQuery) {
      const { rows, total } = await store.listDeliveries(
        db,
        { userId: query.user_id, status: query.status, channel: query.channel, kind: query.kind },
        query.skip,
        query.limit,
      );
      const items: DeliveryView[] = rows.map((r) => ({
        id: r.id,
        notification_id: r.notificationId,
        user_id: r.userId,
        kind: r.kind,
        channel: r.channel as ChannelName,
        target: r.target,
        attempt: r.attempt,
        status: r.status as DeliveryView['status'],
        error: r.error,
        created_at: r.createdAt.toISOString(),
      }));
      return { items, total, skip: query.skip, limit: query.limit };
    },

    /** Sends the test message to the caller's enabled channels (or the one named) and reports each outcome. */
    async sendTest(actor: Actor, channel: ChannelName | undefined): Promise<{ results: DeliveryOutcome[] }> {
      const row = (await store.findPreferences(db, actor.id)) ?? defaults(actor.id);
      const recipients = recipientsOf(row, actor.email, channel);
      if (recipients.length === 0) throw new BadRequest(channel ? CHANNEL_NOT_ENABLED : NO_CHANNEL_ENABLED);
      // An address other than the account's own is unverified: test mail to it is limited, so the route cannot be
      // used to send mail to strangers.
      const unverified = recipients.some((r) => r.channel === 'email' && r.address.toLowerCase() !== actor.email?.toLowerCase());
      if (unverified) {
        const since = new Date(deps.clock.now().getTime() - UNVERIFIED_TEST_WINDOW_MS);
        if ((await store.countTestEmailsSince(db, actor.id, since)) >= UNVERIFIED_TEST_EMAILS_PER_HOUR) {
          throw new TooManyRequests(UNVERIFIED_TEST_WINDOW_MS / 1000, TEST_EMAIL_LIMIT);
        }
      }
      return { results: await Promise.all(recipients.map((r) => deliver(r, 'test', TEST_MESSAGE))) };
    },

    /**
     * Alerts every active account subscribed to `kind` on each of its enabled channels. For other modules to call
     * without awaiting (experiment started or completed, SRM detected, flag rolled back): it never rejects; failures
     * are in the delivery log.
     */
    notify<K extends NotificationKind>(kind: K, payload: NotificationPayloads[K]): Promise<DeliveryOutcome[]> {
      const sending = alert(kind, payload);
      inFlight.add(sending);
      void sending.then(() => inFlight.delete(sending));
      return sending;
    },

    /** Resolves once every alert started so far has finished its deliveries, retries included (tests await it). */
    async drain(): Promise<void> {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}
