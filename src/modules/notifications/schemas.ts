import { Type, type Static } from 'typebox';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';
import { CHANNELS } from './channels.js';
import { NOTIFICATION_KINDS } from './messages.js';

const Events = Type.Array(StringEnum(NOTIFICATION_KINDS), {
  uniqueItems: true,
  maxItems: NOTIFICATION_KINDS.length,
  description: 'Event kinds to be alerted about',
});

export const PreferencesView = Type.Object({
  user_id: Uuid(),
  email_enabled: Type.Boolean(),
  email_address: Nullable(Type.String({ description: "Where email goes; null means the account's address" })),
  chat_webhook_enabled: Type.Boolean(),
  chat_webhook_url: Nullable(Type.String({ description: 'Scheme and host only: the full URL is a secret and never returned' })),
  events: Events,
  updated_at: Nullable(DateTime({ description: 'null while the defaults apply' })),
  email_configured: Type.Boolean({
    description: 'Read-only: whether this server can send email (SMTP_HOST is set). While false, email notifications are not delivered even when email_enabled is true.',
  }),
});
export type PreferencesView = Static<typeof PreferencesView>;

export const PreferencesUpdate = Type.Object(
  {
    email_enabled: Type.Optional(Type.Boolean()),
    email_address: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
    chat_webhook_enabled: Type.Optional(Type.Boolean()),
    chat_webhook_url: Type.Optional(
      Nullable(Type.String({ format: 'uri', maxLength: 2048, description: 'An https incoming-webhook URL on an allowed chat host' })),
    ),
    events: Type.Optional(Events),
  },
  { additionalProperties: false, examples: [
    {
      email_enabled: true,
      chat_webhook_enabled: true,
      chat_webhook_url: 'https://hooks.slack.com/services/T0000/B0000/XXXXXXXX',
      events: ['experiment_started', 'experiment_completed', 'srm_detected'],
    },
  ] },
);
export type PreferencesUpdate = Static<typeof PreferencesUpdate>;

export const AdminPreferencesView = Type.Object({
  ...PreferencesView.properties,
  username: Nullable(Type.String()),
});
export type AdminPreferencesView = Static<typeof AdminPreferencesView>;

const Paging = {
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
};

export const AdminPreferencesPage = Type.Object({
  items: Type.Array(AdminPreferencesView),
  total: Type.Integer(),
  skip: Type.Integer(),
  limit: Type.Integer(),
});
export const PageQuery = Type.Object(Paging);

const DeliveryStatus = StringEnum(['sent', 'failed']);

export const DeliveryView = Type.Object({
  id: Uuid(),
  notification_id: Uuid({ description: 'Shared by the attempts of one message to one channel' }),
  user_id: Nullable(Uuid()),
  kind: Type.String(),
  channel: StringEnum(CHANNELS),
  target: Type.String({ description: 'Email address, or the webhook scheme and host' }),
  attempt: Type.Integer({ minimum: 1 }),
  status: DeliveryStatus,
  error: Nullable(Type.String()),
  created_at: DateTime(),
});
export type DeliveryView = Static<typeof DeliveryView>;

export const DeliveryLogQuery = Type.Object({
  ...Paging,
  user_id: Type.Optional(Uuid()),
  status: Type.Optional(DeliveryStatus),
  channel: Type.Optional(StringEnum(CHANNELS)),
  kind: Type.Optional(StringEnum([...NOTIFICATION_KINDS, 'test'])),
});
export type DeliveryLogQuery = Static<typeof DeliveryLogQuery>;

export const DeliveryLogPage = Type.Object({
  items: Type.Array(DeliveryView),
  total: Type.Integer(),
  skip: Type.Integer(),
  limit: Type.Integer(),
});

export const TestQuery = Type.Object({
  channel: Type.Optional(StringEnum(CHANNELS, { description: 'Only this channel; default: every enabled channel' })),
});

export const DeliveryOutcome = Type.Object({
  notification_id: Uuid(),
  channel: StringEnum(CHANNELS),
  target: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 1 }),
  error: Nullable(Type.String()),
});
export type DeliveryOutcome = Static<typeof DeliveryOutcome>;

export const TestResult = Type.Object({ results: Type.Array(DeliveryOutcome) });
