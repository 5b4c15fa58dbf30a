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
    schema: { tags, operationId: 'readSafetySettings', summary: 'Global safety settings', description: 'Any signed-in role. The global safety settings: auto_rollback_enabled (false stops every automatic rollback), the default error_rate_threshold and window_minutes.', response: { 200: SettingsView, ...errorResponses(401) } },
  }, () => safety.settings());

  app.post('/settings', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'updateSafetySettings', summary: 'Change global safety settings (superuser); omitted fields keep their value',
      description: 'Superusers only. Omitted fields keep their value; null is 422.',
      body: SettingsUpdate, response: { 200: SettingsView, ...errorResponses(401, 403, 422) },
    },
  }, (req) => safety.updateSettings(actorOf(req), req.body));

  app.get('/feature-flags/:flag_id/config', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readFlagSafetyConfig', summary: "A flag's safety config (defaults while none is stored)",
      description: "Any signed-in role. The flag's safety config (enabled, metrics, rollback_percentage), or the defaults while none is stored. Unknown flag is 404.",
      params: FlagParams, response: { 200: ConfigView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => safety.config(req.params.flag_id));

  app.post('/feature-flags/:flag_id/config', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'updateFlagSafetyConfig',
      summary: "Create or change a flag's safety config (superuser); omitted fields keep their value, or take their default on create",
      description: 'Superusers only (403 even for ADMIN without the flag). Null for enabled, metrics or rollback_percentage is 422; rollback_percentage is 0 to 100.',
      params: FlagParams, body: ConfigUpdate, response: { 200: ConfigView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => safety.updateConfig(actorOf(req), req.params.flag_id, req.body));

  app.get('/feature-flags/:flag_id/check', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'checkFlagSafety', summary: "The flag's current error rate against its threshold (changes nothing)",
      description: "Any signed-in role. Counted error reports per minute in the window against the flag's threshold, client reports that never trigger a rollback, and whether the scheduler would roll the flag back now. Changes nothing.",
      params: FlagParams, response: { 200: CheckView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => safety.check(req.params.flag_id));

  app.post('/feature-flags/:flag_id/rollback', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'rollbackFlag',
      summary: 'Set the rollout to percentage (0 turns the flag off for all users) and pause its active schedule (superuser)',
      description: "Superusers only. Sets the flag's rollout percentage to the query percentage (0 to 100, else 422); 0 turns the flag off for all users. The flag's active rollout schedule is paused so it does not undo the rollback.",
      params: FlagParams, querystring: RollbackQuery, response: { 200: RollbackView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => safety.rollback(actorOf(req), req.params.flag_id, req.query));
};
