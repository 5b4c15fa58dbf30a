import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  AdminPreferencesPage,
  DeliveryLogPage,
  DeliveryLogQuery,
  PageQuery,
  PreferencesUpdate,
  PreferencesView,
  TestQuery,
  TestResult,
} from './schemas.js';
import type { NotificationsService } from './service.js';

const tags = ['notifications'];

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ notifications: NotificationsService }> = async (app, { notifications }) => {
  app.get('/preferences', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'getNotificationPreferences', summary: "The caller's notification channels and event kinds",
      description: "Any signed-in role. The caller's channels (email, chat webhook) and the event kinds they receive; defaults while nothing is saved.",
      response: { 200: PreferencesView, ...errorResponses(401) },
    },
  }, (req) => notifications.preferences(actorOf(req)));

  app.put('/preferences', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'updateNotificationPreferences', summary: 'Change notification preferences; omitted fields keep their value',
      description: 'Any signed-in role, for their own preferences; omitted fields keep their value. Enabling the chat webhook needs an https chat_webhook_url on an allowed chat host, and enabling email needs email_address when the account has none (422 otherwise).',
      body: PreferencesUpdate,
      response: { 200: PreferencesView, ...errorResponses(400, 401, 422) },
    },
  }, (req) => notifications.updatePreferences(actorOf(req), req.body));

  app.get('/admin/preferences', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'listAllNotificationPreferences', summary: "Every account's saved preferences (ADMIN)",
      description: "ADMIN only. Every account's saved notification preferences, for checking who receives which alerts.",
      querystring: PageQuery,
      response: { 200: AdminPreferencesPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => notifications.adminPreferences(req.query.skip, req.query.limit));

  app.get('/delivery-log', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'getNotificationDeliveryLog', summary: 'Every delivery attempt with its outcome, newest first (ADMIN)',
      description: 'ADMIN only. Each delivery attempt (email or chat webhook) with its outcome and error, newest first.',
      querystring: DeliveryLogQuery,
      response: { 200: DeliveryLogPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => notifications.deliveryLog(req.query));

  app.post('/test', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'sendTestNotification',
      summary: "Send a test message to the caller's enabled channels and report each outcome (DEVELOPER and up)",
      description: "DEVELOPER and ADMIN. Sends a test message to the caller's enabled channels and reports each outcome; with no channel enabled, or a channel that is not enabled, the answer is 400.",
      querystring: TestQuery,
      response: { 200: TestResult, ...errorResponses(400, 401, 403, 422, 429) },
    },
  }, (req) => notifications.sendTest(actorOf(req), req.query.channel));
};
