import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiKey, clientOf } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { ErrorReportBatchBody, ErrorReportBatchView, ErrorReportBody, ErrorReportView } from './schemas.js';
import type { ErrorReportsService } from './service.js';

const tags = ['tracking'];

/**
 * Error reports of client applications (X-API-Key), under /api/v1/tracking. Reports from a key with scope
 * sdk:ruleset whose owner is ADMIN, DEVELOPER or a superuser count toward the flag's error rate; others are kept
 * with request_data.source `client` and reported as uncounted.
 */
export const errorReportsRoutes: FastifyPluginAsyncTypebox<{ errorReports: ErrorReportsService }> = async (app, { errorReports }) => {
  app.post('/errors', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'reportError', summary: 'Store one error report',
      description: "Needs an API key. Stores one error report, attributed to a flag when feature_flag_key is sent (an unknown key is 404). Reports from a key with scope sdk:ruleset whose owner can change flags count toward the flag's error rate and automatic rollback, others are stored as client reports.",
      body: ErrorReportBody, response: { 200: ErrorReportView, ...errorResponses(401, 404, 413, 422, 429) },
    },
  }, (req) => errorReports.report(clientOf(req), req.body));

  app.post('/errors/batch', {
    config: { access: apiKey() },
    schema: {
      tags, operationId: 'reportErrorBatch', summary: 'Store up to 1,000 error reports; those naming an unknown flag are listed, the others stored',
      description: 'Needs an API key. Stores up to 1,000 error reports; those naming an unknown flag are listed, the others stored. Counting toward rollback follows the same rule as the single route.',
      body: ErrorReportBatchBody, response: { 200: ErrorReportBatchView, ...errorResponses(401, 413, 422, 429) },
    },
  }, (req) => errorReports.reportBatch(clientOf(req), req.body));
};
