import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { HistoryQuery, JobHealthView, JobParams, NotifyTestView, SchedulerHealthView, SchedulerRunView } from './schemas.js';
import type { SchedulerHealthService } from './service.js';

const tags = ['scheduler'];

export const schedulerRoutes: FastifyPluginAsyncTypebox<{ schedulerHealth: SchedulerHealthService }> = async (
  app,
  { schedulerHealth },
) => {
  app.get('/health', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readSchedulerHealth', summary: "Each background job's last run, outcome and duration",
      description: 'Any signed-in role. Each background job with its last run, outcome and duration.',
      response: { 200: SchedulerHealthView, ...errorResponses(401) },
    },
  }, () => schedulerHealth.health());

  app.get('/health/:name', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readSchedulerJobHealth', summary: "One background job's last run",
      description: 'Any signed-in role. The last run of one background job; an unknown job name is 404.',
      params: JobParams,
      response: { 200: JobHealthView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => schedulerHealth.jobHealth(req.params.name));

  app.get('/:name/history', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readSchedulerJobHistory', summary: "A background job's runs, newest first",
      description: "Any signed-in role. A background job's recent runs with outcome and duration, newest first; unknown job is 404.",
      params: JobParams, querystring: HistoryQuery,
      response: { 200: Type.Array(SchedulerRunView), ...errorResponses(401, 404, 422) },
    },
  }, (req) => schedulerHealth.history(req.params.name, req.query.skip, req.query.limit));

  app.post('/notify/test', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'sendSchedulerTestAlert', summary: 'Send a test scheduler alert (ADMIN)',
      description: 'ADMIN only. Sends a test alert down the channel that failed background runs use, so operators can check delivery end to end.',
      response: { 200: NotifyTestView, ...errorResponses(401, 403) },
    },
  }, (req) => schedulerHealth.notifyTest(actorOf(req)));
};
