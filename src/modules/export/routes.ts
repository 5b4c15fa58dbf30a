import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  ExperimentReport,
  ExperimentRow,
  FileQuery,
  FlagFileQuery,
  FlagRow,
  MetricDefinitionRow,
  MetricResultRow,
  Overview,
  PeriodQuery,
  ReportParams,
  ReportQuery,
  VariantRow,
  fileResponse,
} from './schemas.js';
import type { ExportFile, ExportService } from './service.js';

const tags = ['export'];
const errors = errorResponses(401, 422, 429, 500);

const sendFile = (reply: FastifyReply, file: ExportFile) => reply.headers(file.headers).send(file.body);

/**
 * /api/v1/export: every role may download. All export routes share one rate-limit count of 10 a minute per
 * client address (platform/rate-limit.ts, Retry-After 60). Files stream row by row.
 */
export const exportRoutes: FastifyPluginAsyncTypebox<{ exporter: ExportService }> = async (app, { exporter }) => {
  app.get('/experiments', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'exportExperiments', summary: 'Download experiments (CSV or JSON)', description: 'Every signed-in role. One row per experiment with status, dates, assignments, events, winner and recommendation, as CSV (default, with a header row) or JSON; start_date and end_date bound created_at inclusively. All export routes share a limit of 10 calls a minute per client (429 with Retry-After: 60).', querystring: FileQuery, response: { 200: fileResponse(ExperimentRow), ...errors } },
  }, async (req, reply) => sendFile(reply, await exporter.experiments(req.query.format, req.query)));

  app.get('/variants', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'exportVariants', summary: 'Download variants with their results (CSV or JSON)', description: "Every signed-in role. One row per variant of each experiment with assignments, conversions, conversion rate, unadjusted p-value and significance after the experiment's correction, as CSV or JSON. Shares the export limit of 10 calls a minute.", querystring: FileQuery, response: { 200: fileResponse(VariantRow), ...errors } },
  }, async (req, reply) => sendFile(reply, await exporter.variants(req.query.format, req.query)));

  app.get('/metric-results', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'exportMetricResults', summary: 'Download the results of metric library metrics (CSV or JSON)', description: "Every signed-in role. One row per variant of each experiment metric that names a metric library definition, as GET /results' definition block gives it: kind, version, value, difference and relative difference with their intervals, p-values, the capping applied and the users it touched. start_date and end_date bound the experiments' created_at inclusively; an experiment whose results cannot be computed has no rows. Shares the export limit of 10 calls a minute.", querystring: FileQuery, response: { 200: fileResponse(MetricResultRow), ...errors } },
  }, async (req, reply) => sendFile(reply, await exporter.metricResults(req.query.format, req.query)));

  app.get('/metric-definitions', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'exportMetricDefinitions', summary: 'Download the metric library (CSV or JSON)', description: 'Every signed-in role. One row per metric definition (kind, events, capping, direction, tags, owner, version), as CSV or JSON, optionally limited by created_at. Shares the export limit of 10 calls a minute.', querystring: FlagFileQuery, response: { 200: fileResponse(MetricDefinitionRow), ...errors } },
  }, async (req, reply) => sendFile(reply, await exporter.metricDefinitions(req.query.format, req.query)));

  app.get('/feature-flags', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'exportFeatureFlags', summary: 'Download feature flags (CSV or JSON)', description: 'Every signed-in role. One row per flag with status and rollout percentage, as CSV or JSON, optionally limited by created_at. Shares the export limit of 10 calls a minute.', querystring: FlagFileQuery, response: { 200: fileResponse(FlagRow), ...errors } },
  }, async (req, reply) => sendFile(reply, await exporter.featureFlags(req.query.format, req.query)));

  app.get('/reports/overview', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'exportOverviewReport', summary: 'Counts of experiments and flags over a period', description: 'Every signed-in role. Counts of experiments, flags, assignments and events created in the period (all time when no dates are given), with the average experiment duration.', querystring: PeriodQuery, response: { 200: Overview, ...errors } },
  }, (req) => exporter.overview(req.query));

  app.get('/reports/experiments/:experiment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'exportExperimentReport', summary: "An experiment's report: its row and its variants' rows", params: ReportParams, querystring: ReportQuery,
      description: "Every signed-in role. JSON (default) gives the experiment's row, its variant rows and its metric result rows (metric library metrics, as GET /export/metric-results); format=csv gives the variant rows, or with rows=metrics the metric result rows. Variant result columns match GET /results for the primary metric. Unknown experiment is 404.",
      response: {
        200: {
          description: "JSON: the experiment's row, its variant rows and its metric result rows; format=csv: the variant rows (or rows=metrics: the metric result rows)",
          content: { 'application/json': { schema: ExperimentReport }, 'text/csv': { schema: { type: 'string' } } },
        },
        ...errorResponses(401, 404, 422, 429, 500),
      },
    },
  }, async (req, reply) => sendFile(reply, await exporter.experimentReport(req.params.experiment_id, req.query.format, req.query.rows)));
};
