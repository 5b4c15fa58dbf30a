import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { role } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { InteractionPair, InteractionScan, PairParams } from './schemas.js';
import type { InteractionsService } from './service.js';

const tags = ['interactions'];
/** Spec: ANALYST, DEVELOPER and ADMIN; VIEWER 403. */
const ANALYSTS = role('ANALYST', 'DEVELOPER', 'ADMIN');

export const interactionsRoutes: FastifyPluginAsyncTypebox<{ interactions: InteractionsService }> = async (app, { interactions }) => {
  app.get('/scan', {
    config: { access: ANALYSTS },
    schema: {
      tags, operationId: 'scanInteractions', summary: 'Users shared by each pair of active experiments (overlap only)',
      description: 'ANALYST, DEVELOPER and ADMIN (VIEWER 403). For each pair of active experiments, how many users both have assigned; it reports overlap only, no test.',
      response: { 200: InteractionScan, ...errorResponses(401, 403) },
    },
  }, () => interactions.scan());

  app.get('/:exp_a_id/:exp_b_id', {
    config: { access: ANALYSTS },
    schema: {
      ...beta, tags, operationId: 'testInteraction',
      summary: "Interaction test of two experiments on each one's primary metric among shared users",
      description: "ANALYST, DEVELOPER and ADMIN. Beta: tests whether the two experiments interact on each one's primary metric among the users they share, using the stored correction method and confidence level. The same experiment twice is 400.",
      params: PairParams,
      response: { 200: InteractionPair, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => interactions.pair(req.params.exp_a_id, req.params.exp_b_id));
};
