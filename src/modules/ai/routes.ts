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
      body: DesignRequest,
      response: { 200: DesignView, ...errorResponses(401, 404, 422, 429) },
    },
  }, (req) => ai.design(req.body));

  app.post('/interpret/:experiment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'interpretExperimentWithAi', summary: "Explain an experiment's results in plain words",
      params: InterpretParams,
      response: { 200: InterpretationView, ...errorResponses(401, 404, 422, 429) },
    },
  }, (req) => ai.interpret(req.params.experiment_id));

  app.get('/sample-size', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'aiSampleSize', summary: 'Users needed per variant for a conversion experiment, with an explanation',
      querystring: SampleSizeQuery,
      response: { 200: SampleSizePlanView, ...errorResponses(401, 422) },
    },
  }, (req) => ai.sampleSize(req.query));

  app.get('/templates', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listAiTemplates', summary: 'Built-in experiment templates',
      response: { 200: Type.Array(TemplateView), ...errorResponses(401) },
    },
  }, () => ai.templates());

  app.get('/templates/:template_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'getAiTemplate', summary: 'One built-in experiment template',
      params: TemplateParams,
      response: { 200: TemplateView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => ai.template(req.params.template_id));
};
