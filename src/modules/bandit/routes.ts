import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { BanditParams, BanditView, WeightsBody } from './schemas.js';
import type { BanditService } from './service.js';

const tags = ['bandit'];

export const banditRoutes: FastifyPluginAsyncTypebox<{ bandit: BanditService }> = async (app, { bandit }) => {
  app.get('/:experiment_id', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readBandit', summary: "A bandit experiment's arms: pulls, rewards and current weights", params: BanditParams, response: { 200: BanditView, ...errorResponses(400, 401, 404, 422) } },
  }, (req) => bandit.get(req.params.experiment_id));

  app.post('/:experiment_id/update', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'updateBandit', summary: 'Recompute weights by Thompson sampling from conversion data',
      params: BanditParams, response: { 200: BanditView, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => bandit.update(actorOf(req), req.params.experiment_id));

  app.put('/:experiment_id/weights', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'overrideBanditWeights', summary: "Override a bandit experiment's arm weights", params: BanditParams, body: WeightsBody,
      response: { 200: BanditView, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => bandit.setWeights(actorOf(req), req.params.experiment_id, req.body));
};
