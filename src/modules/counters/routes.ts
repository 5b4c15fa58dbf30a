import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { BulkBody, BulkView, CounterParams, CountersView, IncrementBody } from './schemas.js';
import type { CountersService } from './service.js';

const tags = ['counters'];

export const countersRoutes: FastifyPluginAsyncTypebox<{ counters: CountersService }> = async (app, { counters }) => {
  app.post('/bulk', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'bulkIncrementCounters', summary: 'Up to 100 increments, each naming its experiment',
      description: 'ADMIN and DEVELOPER. Applies 1 to 100 increments, each naming its experiment, counter (default events) and amount (default 1). Every experiment is checked first: one unknown experiment (404) refuses the whole request.',
      body: BulkBody, response: { 200: BulkView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => counters.bulk(req.body));

  app.get('/:experiment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readCounters', summary: "An experiment's live counters per variant", params: CounterParams,
      description: "Any signed-in role. The experiment's named live counters and their total; they are kept apart from tracking events and results. Unknown experiment is 404.",
      response: { 200: CountersView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => counters.get(req.params.experiment_id));

  app.post('/:experiment_id/increment', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'incrementCounter', summary: 'Add to a live counter', params: CounterParams, body: IncrementBody,
      description: 'ADMIN and DEVELOPER. Adds amount (1 to 1,000,000, default 1) to a named counter (default events). An experiment_id in the body that differs from the path is 400; unknown experiment 404.',
      response: { 200: CountersView, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => counters.increment(req.params.experiment_id, req.body));

  app.post('/:experiment_id/reset', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'resetCounters', summary: "Reset an experiment's live counters", params: CounterParams,
      description: 'ADMIN only. Removes every live counter of the experiment and writes a counters_reset audit entry with the values before; tracking events and results are not touched.',
      response: { 200: CountersView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => counters.reset(actorOf(req), req.params.experiment_id));
};
