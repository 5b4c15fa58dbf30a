import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  ExperimentCreate,
  ExperimentListQuery,
  ExperimentMetadata,
  ExperimentParams,
  ExperimentSchedule,
  ExperimentUpdate,
  ExperimentView,
} from './schemas.js';
import type { ExperimentsService } from './service.js';

const tags = ['experiments'];
/** Spec: ANALYST and VIEWER change no experiment, whoever owns it; every role reads. */
const CHANGE = role('ADMIN', 'DEVELOPER');

export const experimentsRoutes: FastifyPluginAsyncTypebox<{ experiments: ExperimentsService }> = async (app, { experiments }) => {
  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listExperiments', summary: 'List experiments (filter, search, sort, page)',
      querystring: ExperimentListQuery,
      response: { 200: Type.Array(ExperimentView), ...errorResponses(401, 422) },
    },
  }, (req) => experiments.list(req.query));

  app.post('/', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'createExperiment', summary: 'Create an experiment (always a draft)',
      body: ExperimentCreate,
      response: { 201: ExperimentView, ...errorResponses(401, 403, 409, 422, 501) },
    },
  }, async (req, reply) => reply.code(201).send(await experiments.create(actorOf(req), req.body)));

  app.get('/:experiment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readExperiment', summary: 'An experiment with owner_name',
      params: ExperimentParams,
      response: { 200: ExperimentView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => experiments.get(req.params.experiment_id));

  app.put('/:experiment_id', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'updateExperiment',
      summary: 'Update an experiment; sent metrics replace the stored ones; statistical settings only while draft',
      params: ExperimentParams, body: ExperimentUpdate,
      response: { 200: ExperimentView, ...errorResponses(400, 401, 403, 404, 409, 422, 501) },
    },
  }, (req) => experiments.update(actorOf(req), req.params.experiment_id, req.body));

  app.delete('/:experiment_id', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'deleteExperiment', summary: 'Delete a draft experiment',
      params: ExperimentParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => {
    await experiments.delete(actorOf(req), req.params.experiment_id);
    return reply.code(204).send(null);
  });

  app.put('/:experiment_id/schedule', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'scheduleExperiment', summary: 'Set the scheduled start_date and end_date (end after start)',
      params: ExperimentParams, body: ExperimentSchedule,
      response: { 200: ExperimentView, ...errorResponses(400, 401, 403, 404, 409, 422) },
    },
  }, (req) => experiments.schedule(actorOf(req), req.params.experiment_id, req.body));

  const transitions = [
    ['start', 'startExperiment', 'Start a draft or resume a paused experiment'],
    ['pause', 'pauseExperiment', 'Pause an active experiment'],
    ['complete', 'completeExperiment', 'Complete an active or paused experiment'],
    ['archive', 'archiveExperiment', 'Archive a draft, paused or completed experiment'],
  ] as const;
  for (const [name, operationId, summary] of transitions) {
    app.post(`/:experiment_id/${name}`, {
      config: { access: CHANGE },
      schema: {
        tags, operationId, summary,
        params: ExperimentParams,
        response: { 200: ExperimentView, ...errorResponses(401, 403, 404, 409, 422) },
      },
    }, (req) => experiments[name](actorOf(req), req.params.experiment_id));
  }

  app.post('/:experiment_id/clone', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'cloneExperiment', summary: 'Copy an experiment into a new draft with a new key',
      params: ExperimentParams,
      response: { 201: ExperimentView, ...errorResponses(401, 403, 404, 409, 422, 501) },
    },
  }, async (req, reply) => reply.code(201).send(await experiments.clone(actorOf(req), req.params.experiment_id)));

  app.post('/:experiment_id/metadata', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'annotateExperiment', summary: 'Store annotations on an experiment (merged; null removes a key)',
      params: ExperimentParams, body: ExperimentMetadata,
      response: { 200: ExperimentView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => experiments.annotate(actorOf(req), req.params.experiment_id, req.body));
};
