import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { role } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { PreviewParams, PreviewQuery, SplitUrlPreview } from './schemas.js';
import type { SplitUrlService } from './service.js';

/** One declaration for both profiles, so the core contract is the full one's; core passes `splitUrlUnavailable`. */
export const splitUrlRoutes: FastifyPluginAsyncTypebox<{ splitUrl: SplitUrlService }> = async (app, { splitUrl }) => {
  app.get('/:experiment_id/split-url/preview', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags: ['split-url'], operationId: 'previewSplitUrlVariant',
      summary: 'The URL variant a user id hashes to ({user_id}:{experiment_id}); predicts no router',
      description: "ADMIN and DEVELOPER. Which URL variant of the experiment's split_url_config the user id falls in, by hashing {user_id}:{experiment_id}; no router is predicted. An experiment of another type or without a configuration is 400, a stored configuration that is no longer valid 409, and a core deployment answers 501.",
      params: PreviewParams, querystring: PreviewQuery,
      response: { 200: SplitUrlPreview, ...errorResponses(400, 401, 403, 404, 409, 422, 501) },
    },
  }, (req) => splitUrl.preview(req.params.experiment_id, req.query.user_id));
};
