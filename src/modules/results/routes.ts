import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { ErrorBody, errorResponses, MessageBody } from '../../platform/schemas.js';
import {
  BayesianResult,
  CupedResult,
  DailyResults,
  ResultsParams,
  ResultsPayload,
  ResultsQuery,
  SampleSizeQuery,
  SampleSizeResult,
  SegmentCounts,
  SegmentedResults,
  SegmentParams,
  SegmentQuery,
  SequentialQuery,
  SequentialResult,
  SrmSettings,
  SrmSettingsBody,
} from './schemas.js';
import type { ResultsService } from './service.js';

const tags = ['results'];
/** Spec: results are READ for every signed-in role. */
const READ = signedIn();
/** The first computation of a large experiment runs in the background past RESULTS_READ_TIMEOUT_MS (docs/api-notes.md). */
const COMPUTING = { 202: { ...ErrorBody, description: 'Computing: the rollups are being built; retry after Retry-After seconds' } };

/** /api/v1/results: the results payload and the analyses built on the same data. */
export const resultsRoutes: FastifyPluginAsyncTypebox<{ results: ResultsService }> = async (app, { results }) => {
  app.get('/:experiment_id', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readResults',
      summary: 'Results: per metric and variant, tests with the correction, SRM check, recommendation (cached)',
      params: ResultsParams, querystring: ResultsQuery,
      response: { ...COMPUTING, 200: ResultsPayload, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.results(req.params.experiment_id, req.query));

  app.post('/:experiment_id/invalidate-cache', {
    config: { access: role('ADMIN', 'DEVELOPER', 'ANALYST') },
    schema: {
      tags, operationId: 'invalidateResultsCache', summary: "Clear the experiment's cached results",
      params: ResultsParams,
      response: { 200: MessageBody, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => results.invalidate(req.params.experiment_id));

  app.get('/:experiment_id/sample-size', {
    config: { access: READ },
    // Spec: an unknown experiment is 404 whatever the other parameters, so it is checked before validation.
    preValidation: async (req) => results.requireExperiment((req.params as { experiment_id: string }).experiment_id),
    schema: {
      tags, operationId: 'readSampleSize', summary: 'Sample size the primary metric needs, and whether it is reached',
      params: ResultsParams, querystring: SampleSizeQuery,
      response: { ...COMPUTING, 200: SampleSizeResult, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.sampleSize(req.params.experiment_id, req.query));

  app.get('/:experiment_id/sequential', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readSequentialResults',
      summary: 'mSPRT always-valid p-values and intervals per treatment, early-stop recommendation, advisory at_risk',
      params: ResultsParams, querystring: SequentialQuery,
      response: { ...COMPUTING, 200: SequentialResult, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.sequential(req.params.experiment_id, req.query.alpha));

  app.get('/:experiment_id/bayesian', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readBayesianResults', summary: 'Beta-Binomial analysis (only when bayesian_enabled)',
      params: ResultsParams,
      response: { ...COMPUTING, 200: BayesianResult, ...errorResponses(400, 401, 404, 422) },
    },
  }, (req) => results.bayesian(req.params.experiment_id));

  app.post('/:experiment_id/post-stratification', {
    config: { access: READ },
    schema: {
      ...beta, tags, operationId: 'postStratifyResults', summary: 'Post-stratification (not implemented: 501)',
      params: ResultsParams,
      response: errorResponses(401, 404, 422, 501),
    },
  }, (req) => results.postStratification(req.params.experiment_id));

  app.get('/:experiment_id/cuped', {
    config: { access: READ },
    schema: {
      ...beta, tags, operationId: 'readCupedResults',
      summary: 'CUPED-adjusted effect per conversion metric and treatment, from pre-exposure events of the covariate metric',
      params: ResultsParams,
      response: { ...COMPUTING, 200: CupedResult, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.cuped(req.params.experiment_id));

  app.get('/:experiment_id/segments/:segment_by', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readSegmentBreakdown',
      summary: 'Counts per value of an assignment-context attribute, variant and metric (no test; not for drafts)',
      params: SegmentParams, querystring: SegmentQuery,
      response: { ...COMPUTING, 200: SegmentCounts, ...errorResponses(400, 401, 404, 422) },
    },
  }, (req) => results.segmentBreakdown(req.params.experiment_id, req.params.segment_by, req.query));

  app.get('/:experiment_id/srm-settings', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readSrmSettings', summary: 'SRM auto-pause opt-in, and when the last SRM alert and auto-pause happened',
      params: ResultsParams,
      response: { 200: SrmSettings, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.srmSettings(req.params.experiment_id));

  app.put('/:experiment_id/srm-settings', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'updateSrmSettings',
      summary: 'Opt in or out of pausing the experiment automatically when the sequential SRM test fails (audited)',
      params: ResultsParams, body: SrmSettingsBody,
      response: { 200: SrmSettings, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => results.updateSrmSettings(actorOf(req), req.params.experiment_id, req.body));
};

/** The experiment-scoped result routes, registered under /api/v1/experiments beside the experiments plugin. */
export const experimentResultsRoutes: FastifyPluginAsyncTypebox<{ results: ResultsService }> = async (app, { results }) => {
  const experimentTags = ['experiments'];
  app.get('/:experiment_id/results', {
    config: { access: READ },
    schema: {
      tags: experimentTags, operationId: 'readExperimentResults', summary: 'Same as GET /results/{experiment_id} with no options',
      params: ResultsParams,
      response: { ...COMPUTING, 200: ResultsPayload, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.results(req.params.experiment_id));

  app.get('/:experiment_id/daily-results', {
    config: { access: READ },
    schema: {
      tags: experimentTags, operationId: 'readDailyResults', summary: 'Cumulative results at the end of each UTC day',
      params: ResultsParams,
      response: { ...COMPUTING, 200: DailyResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.daily(req.params.experiment_id));

  app.get('/:experiment_id/segmented-results/:segment_by', {
    config: { access: READ },
    schema: {
      tags: experimentTags, operationId: 'readSegmentedResults',
      summary: 'Results per value of an assignment-context attribute, Bonferroni over the segments',
      params: SegmentParams,
      response: { ...COMPUTING, 200: SegmentedResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.segmentedResults(req.params.experiment_id, req.params.segment_by));
};
