import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { BanditParams, BanditView, WeightsBody } from './schemas.js';
import type { BanditService } from './service.js';

const tags = ['bandit'];

export const banditRoutes: FastifyPluginAsyncTypebox<{ bandit: BanditService }> = async (app, { bandit }) => {
  app.get('/:experiment_id', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readBandit', summary: "A bandit experiment's arms: pulls, rewards and current weights", description: 'Any signed-in role. Shows each arm of a bandit experiment with its pulls, rewards and current weight. An experiment that is not a bandit is 400; unknown is 404.', params: BanditParams, response: { 200: BanditView, ...errorResponses(400, 401, 404, 422) } },
  }, (req) => bandit.get(req.params.experiment_id));

  app.post('/:experiment_id/update', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'updateBandit', summary: 'Recompute weights by Thompson sampling from conversion data',
      description: 'ADMIN and DEVELOPER. Recomputes the arm weights by Thompson sampling from the assignments and conversions of the primary metric; new users are routed by these weights. Not a bandit, or no metric to learn from, is 400.',
      params: BanditParams, response: { 200: BanditView, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => bandit.update(actorOf(req), req.params.experiment_id));

  app.put('/:experiment_id/weights', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'overrideBanditWeights', summary: "Override a bandit experiment's arm weights", params: BanditParams, body: WeightsBody,
      description: 'ADMIN only. Replaces the arm weights by hand: the weights must name every variant of the experiment and nothing else and sum to 1, otherwise 422. Not a bandit experiment is 400.',
      response: { 200: BanditView, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => bandit.setWeights(actorOf(req), req.params.experiment_id, req.body));
};
