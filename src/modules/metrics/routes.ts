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
      description: 'Any signed-in role. Error reports over a time window: error_rate from reports that count toward flag safety, uncounted_error_count from client reports that do not, and the flags with the most errors.',
      querystring: SummaryQuery, response: { 200: Summary, ...errorResponses(401, 422) },
    },
  }, (req) => metrics.summary(req.query));
};
