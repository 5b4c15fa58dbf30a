import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { ErrorBody, errorResponses, MessageBody } from '../../platform/schemas.js';
import {
  BayesianResult,
  CupedResult,
  DailyResults,
  MetricQuery,
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
      description: 'Any signed-in role. Per metric and variant: sample size, conversions, mean, p-value and adjusted p-value under the correction, plus the sample-ratio check and a recommendation (INCONCLUSIVE when the check fails). correction_method and confidence_level apply to this request only; results are cached 5 minutes while running, 24 hours otherwise.',
      params: ResultsParams, querystring: ResultsQuery,
      response: { ...COMPUTING, 200: ResultsPayload, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.results(req.params.experiment_id, req.query));

  app.post('/:experiment_id/invalidate-cache', {
    config: { access: role('ADMIN', 'DEVELOPER', 'ANALYST') },
    schema: {
      tags, operationId: 'invalidateResultsCache', summary: "Clear the experiment's cached results",
      description: 'ADMIN, DEVELOPER and ANALYST. Clears the cached results of the experiment so the next read recomputes them.',
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
      description: 'Any signed-in role. Users per variant the primary metric needs at the stored or given baseline, mde, confidence level, power and correction, and whether it is reached. When nothing can be planned the answer is 200 with unavailable_reason; impossible inputs are 422.',
      params: ResultsParams, querystring: SampleSizeQuery,
      response: { ...COMPUTING, 200: SampleSizeResult, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.sampleSize(req.params.experiment_id, req.query));

  app.get('/:experiment_id/sequential', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readSequentialResults',
      summary: 'mSPRT always-valid p-values and intervals per treatment, early-stop recommendation, advisory at_risk',
      description: 'Any signed-in role. mSPRT always-valid p-values and intervals per treatment at the stored alpha or the alpha given (above 0, at most 0.2), with an early-stop recommendation and an advisory at_risk flag.',
      params: ResultsParams, querystring: SequentialQuery,
      response: { ...COMPUTING, 200: SequentialResult, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.sequential(req.params.experiment_id, req.query));

  app.get('/:experiment_id/bayesian', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readBayesianResults', summary: 'Beta-Binomial analysis (only when bayesian_enabled)',
      description: 'Any signed-in role. The Beta-Binomial analysis of an experiment with bayesian_enabled: per treatment prob_beat_control, expected_loss and rope_probability, and the decision. Not enabled, or no metric and control to analyse, is 400.',
      params: ResultsParams, querystring: MetricQuery,
      response: { ...COMPUTING, 200: BayesianResult, ...errorResponses(400, 401, 404, 422) },
    },
  }, (req) => results.bayesian(req.params.experiment_id, req.query));

  app.post('/:experiment_id/post-stratification', {
    config: { access: READ },
    schema: {
      ...beta, tags, operationId: 'postStratifyResults', summary: 'Post-stratification (not implemented: 501)',
      description: 'Beta and not implemented: for a known experiment the answer is always 501; an unknown one is 404.',
      params: ResultsParams,
      response: errorResponses(401, 404, 422, 501),
    },
  }, (req) => results.postStratification(req.params.experiment_id));

  app.get('/:experiment_id/cuped', {
    config: { access: READ },
    schema: {
      ...beta, tags, operationId: 'readCupedResults',
      summary: 'CUPED-adjusted effect per conversion metric and treatment, from pre-exposure events of the covariate metric',
      description: 'Any signed-in role. Beta: covariate-adjusted effect, variance reduction and share of users with history per conversion metric and treatment; unavailable_reason where it cannot be computed.',
      params: ResultsParams,
      response: { ...COMPUTING, 200: CupedResult, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.cuped(req.params.experiment_id));

  app.get('/:experiment_id/segments/:segment_by', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readSegmentBreakdown',
      summary: 'Counts per value of an assignment-context attribute, variant and metric (no test; not for drafts)',
      description: "Any signed-in role. Counts per value of an assignment-context attribute, variant and metric, without a significance test; a metric naming a metric library definition adds the definition's value in each segment and variant (`definition`); a draft experiment is 400.",
      params: SegmentParams, querystring: SegmentQuery,
      response: { ...COMPUTING, 200: SegmentCounts, ...errorResponses(400, 401, 404, 422) },
    },
  }, (req) => results.segmentBreakdown(req.params.experiment_id, req.params.segment_by, req.query));

  app.get('/:experiment_id/srm-settings', {
    config: { access: READ },
    schema: {
      tags, operationId: 'readSrmSettings', summary: 'SRM auto-pause opt-in, and when the last SRM alert and auto-pause happened',
      description: 'Any signed-in role. Returns whether the experiment is paused automatically when the sequential sample-ratio-mismatch test fails, when that setting last changed, when the results-rollup job last alerted an SRM and when it last paused the experiment. An unknown experiment is 404.',
      params: ResultsParams,
      response: { 200: SrmSettings, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.srmSettings(req.params.experiment_id));

  app.put('/:experiment_id/srm-settings', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'updateSrmSettings',
      summary: 'Opt in or out of pausing the experiment automatically when the sequential SRM test fails (audited)',
      description: 'ADMIN or DEVELOPER (any other role is 403). Sets auto_pause: when on, the results-rollup job pauses the running experiment once when its sequential SRM test fails. The change is recorded in the audit trail and the cached results show it at once. An unknown experiment is 404; a body other than {auto_pause: boolean} is 422.',
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
      description: 'Any signed-in role. The results payload of GET /api/v1/results/{experiment_id} with the stored settings.',
      params: ResultsParams,
      response: { ...COMPUTING, 200: ResultsPayload, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.results(req.params.experiment_id));

  app.get('/:experiment_id/daily-results', {
    config: { access: READ },
    schema: {
      tags: experimentTags, operationId: 'readDailyResults', summary: 'Cumulative results at the end of each UTC day',
      description: 'Any signed-in role. Cumulative results at the end of each UTC day since the start, for a trend chart.',
      params: ResultsParams,
      response: { ...COMPUTING, 200: DailyResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.daily(req.params.experiment_id));

  app.get('/:experiment_id/segmented-results/:segment_by', {
    config: { access: READ },
    schema: {
      tags: experimentTags, operationId: 'readSegmentedResults',
      summary: 'Results per value of an assignment-context attribute, Bonferroni over the segments',
      description: 'Any signed-in role. Results per value of the given assignment-context attribute, with a Bonferroni correction over the segments.',
      params: SegmentParams,
      response: { ...COMPUTING, 200: SegmentedResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => results.segmentedResults(req.params.experiment_id, req.params.segment_by));
};
