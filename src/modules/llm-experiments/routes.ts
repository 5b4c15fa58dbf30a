import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses } from '../../platform/schemas.js';
import { ExperimentParams, JudgeQuery, JudgeSummary, LlmResults, OutputsCreate, OutputsStored } from './schemas.js';
import type { LlmExperimentsService } from './service.js';

const tags = ['llm-experiments'];

export const llmExperimentsRoutes: FastifyPluginAsyncTypebox<{ llmExperiments: LlmExperimentsService }> = async (app, { llmExperiments }) => {
  app.post('/:experiment_id/outputs', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      ...beta, tags, operationId: 'recordLlmOutputs', summary: "Store model outputs for the experiment's variants, to be judged",
      description: 'ADMIN and DEVELOPER. Beta: stores model outputs per variant for later judging; a variant_name that is not a variant of the experiment is 422.',
      params: ExperimentParams, body: OutputsCreate,
      response: { 201: OutputsStored, ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await llmExperiments.recordOutputs(actorOf(req), req.params.experiment_id, req.body)));

  app.post('/:experiment_id/judge', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'judgeLlmExperiment',
      summary: 'Score stored outputs with the configured language model (unscored: call_failed or no_score)',
      description: 'ADMIN and DEVELOPER. Sends stored outputs to the configured language model for a score from 0 to 1; a failed call or a reply without a score stores no score (call_failed or no_score). Without LLM_API_URL and LLM_API_KEY the answer is 503.',
      params: ExperimentParams, querystring: JudgeQuery,
      response: { 200: JudgeSummary, ...errorResponses(401, 403, 404, 422, 503) },
    },
  }, (req) => llmExperiments.judge(actorOf(req), req.params.experiment_id, req.query));

  app.get('/:experiment_id/results', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'getLlmExperimentResults', summary: 'Judge scores per variant and each variant against the control',
      description: "Any signed-in role. Average judge scores per variant and each variant compared with the control; unscored outputs are left out and counted. p_value and effect_size are null when neither variant's scores vary.",
      params: ExperimentParams,
      response: { 200: LlmResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => llmExperiments.results(req.params.experiment_id));
};
