import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, signedIn, superuserOnly } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { CheckView, ConfigUpdate, ConfigView, FlagParams, RollbackQuery, RollbackView, SettingsUpdate, SettingsView } from './schemas.js';
import type { SafetyService } from './service.js';

const tags = ['safety'];

/**
 * Spec, Authentication 3: changing global settings or a flag's safety config, and rolling back, need is_superuser
 * (an ADMIN without it gets 403). Reading settings, config and checks is open to every signed-in role.
 */
export const safetyRoutes: FastifyPluginAsyncTypebox<{ safety: SafetyService }> = async (app, { safety }) => {
  app.get('/settings', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readSafetySettings', summary: 'Global safety settings', response: { 200: SettingsView, ...errorResponses(401) } },
  }, () => safety.settings());

  app.post('/settings', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'updateSafetySettings', summary: 'Change global safety settings (superuser); omitted fields keep their value',
      body: SettingsUpdate, response: { 200: SettingsView, ...errorResponses(401, 403, 422) },
    },
  }, (req) => safety.updateSettings(actorOf(req), req.body));

  app.get('/feature-flags/:flag_id/config', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readFlagSafetyConfig', summary: "A flag's safety config (defaults while none is stored)",
      params: FlagParams, response: { 200: ConfigView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => safety.config(req.params.flag_id));

  app.post('/feature-flags/:flag_id/config', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'updateFlagSafetyConfig',
      summary: "Create or change a flag's safety config (superuser); omitted fields keep their value, or take their default on create",
      params: FlagParams, body: ConfigUpdate, response: { 200: ConfigView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => safety.updateConfig(actorOf(req), req.params.flag_id, req.body));

  app.get('/feature-flags/:flag_id/check', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'checkFlagSafety', summary: "The flag's current error rate against its threshold (changes nothing)",
      params: FlagParams, response: { 200: CheckView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => safety.check(req.params.flag_id));

  app.post('/feature-flags/:flag_id/rollback', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'rollbackFlag',
      summary: 'Set the rollout to percentage (0 turns the flag off for all users) and pause its active schedule (superuser)',
      params: FlagParams, querystring: RollbackQuery, response: { 200: RollbackView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => safety.rollback(actorOf(req), req.params.flag_id, req.query));
};
