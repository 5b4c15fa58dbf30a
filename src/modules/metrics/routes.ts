import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { Summary, SummaryQuery } from './schemas.js';
import type { MetricsService } from './service.js';

export const metricsRoutes: FastifyPluginAsyncTypebox<{ metrics: MetricsService }> = async (app, { metrics }) => {
  app.get('/summary', {
    config: { access: signedIn() },
    schema: {
      tags: ['metrics'], operationId: 'metricsSummary',
      summary: 'Error reports over a window: counted error_rate, uncounted_error_count, and the flags with most errors',
      querystring: SummaryQuery, response: { 200: Summary, ...errorResponses(401, 422) },
    },
  }, (req) => metrics.summary(req.query));
};
