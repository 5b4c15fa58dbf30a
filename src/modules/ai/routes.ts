import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  DesignRequest,
  DesignView,
  InterpretationView,
  InterpretParams,
  SampleSizePlanView,
  SampleSizeQuery,
  TemplateParams,
  TemplateView,
} from './schemas.js';
import type { AiService } from './service.js';

const tags = ['ai'];

export const aiRoutes: FastifyPluginAsyncTypebox<{ ai: AiService }> = async (app, { ai }) => {
  app.post('/design', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'designExperimentWithAi',
      summary: 'Suggest an experiment design for a goal: template, variants, metrics and sample size',
      description: 'Any signed-in role. Builds a design from a built-in template (template_id, or the one matching the goal; unknown template_id is 404) and the statistics engine: variants, metrics and sample size. A configured language model may reword the text; numbers always come from the engine, and an unusable reply keeps the template answer. Limited to 10 calls a minute per client.',
      body: DesignRequest,
      response: { 200: DesignView, ...errorResponses(401, 404, 422, 429) },
    },
  }, (req) => ai.design(req.body));

  app.post('/interpret/:experiment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'interpretExperimentWithAi', summary: "Explain an experiment's results in plain words",
      description: "Any signed-in role. Explains the experiment's current results in plain words; the numbers come from the results engine, and without a configured language model, or when its reply is unusable, a built-in text is returned. Unknown experiment is 404; limited to 10 calls a minute per client for all experiments together.",
      params: InterpretParams,
      response: { 200: InterpretationView, ...errorResponses(401, 404, 422, 429) },
    },
  }, (req) => ai.interpret(req.params.experiment_id));

  app.get('/sample-size', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'aiSampleSize', summary: 'Users needed per variant for a conversion experiment, with an explanation',
      description: 'Any signed-in role. Computes the users needed per variant to detect the given relative effect on a baseline conversion rate, with a short explanation of the inputs. Values outside their ranges are 422.',
      querystring: SampleSizeQuery,
      response: { 200: SampleSizePlanView, ...errorResponses(401, 422) },
    },
  }, (req) => ai.sampleSize(req.query));

  app.get('/templates', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listAiTemplates', summary: 'Built-in experiment templates',
      description: 'Any signed-in role. Lists the built-in experiment templates the design helper starts from; nothing is stored per account.',
      response: { 200: Type.Array(TemplateView), ...errorResponses(401) },
    },
  }, () => ai.templates());

  app.get('/templates/:template_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'getAiTemplate', summary: 'One built-in experiment template',
      description: 'Any signed-in role. Returns one built-in template by its id; an unknown id is 404.',
      params: TemplateParams,
      response: { 200: TemplateView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => ai.template(req.params.template_id));
};
