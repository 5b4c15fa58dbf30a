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
      response: { 200: PreferencesView, ...errorResponses(401) },
    },
  }, (req) => notifications.preferences(actorOf(req)));

  app.put('/preferences', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'updateNotificationPreferences', summary: 'Change notification preferences; omitted fields keep their value',
      body: PreferencesUpdate,
      response: { 200: PreferencesView, ...errorResponses(400, 401, 422) },
    },
  }, (req) => notifications.updatePreferences(actorOf(req), req.body));

  app.get('/admin/preferences', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'listAllNotificationPreferences', summary: "Every account's saved preferences (ADMIN)",
      querystring: PageQuery,
      response: { 200: AdminPreferencesPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => notifications.adminPreferences(req.query.skip, req.query.limit));

  app.get('/delivery-log', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'getNotificationDeliveryLog', summary: 'Every delivery attempt with its outcome, newest first (ADMIN)',
      querystring: DeliveryLogQuery,
      response: { 200: DeliveryLogPage, ...errorResponses(401, 403, 422) },
    },
  }, (req) => notifications.deliveryLog(req.query));

  app.post('/test', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'sendTestNotification',
      summary: "Send a test message to the caller's enabled channels and report each outcome (DEVELOPER and up)",
      querystring: TestQuery,
      response: { 200: TestResult, ...errorResponses(400, 401, 403, 422, 429) },
    },
  }, (req) => notifications.sendTest(actorOf(req), req.query.channel));
};
