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
      description: 'Every signed-in role. Filter by status_filter, search in name, key or description (any case), sort by sort_by and sort_order, page with skip and limit (default 100, at most 500).',
      querystring: ExperimentListQuery,
      response: { 200: Type.Array(ExperimentView), ...errorResponses(401, 422) },
    },
  }, (req) => experiments.list(req.query));

  app.post('/', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'createExperiment', summary: 'Create an experiment (always a draft)',
      description: 'ADMIN and DEVELOPER. Creates a draft: at least one variant with exactly one control and allocations adding up to 100, and at least one metric. A key already in use is 409; targeting rules naming an unknown or unusable segment are 422; a split_url experiment in a core deployment is 501.',
      body: ExperimentCreate,
      response: { 201: ExperimentView, ...errorResponses(401, 403, 409, 422, 501) },
    },
  }, async (req, reply) => reply.code(201).send(await experiments.create(actorOf(req), req.body)));

  app.get('/:experiment_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readExperiment', summary: 'An experiment with owner_name',
      description: "Every signed-in role. The experiment with variants, metrics and statistical settings, and owner_name (the creator's name, never an email).",
      params: ExperimentParams,
      response: { 200: ExperimentView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => experiments.get(req.params.experiment_id));

  app.put('/:experiment_id', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'updateExperiment',
      summary: 'Update an experiment; sent metrics replace the stored ones; statistical settings only while draft',
      description: 'ADMIN and DEVELOPER; ownership is not considered. Only sent fields change, and sent metrics replace the stored ones. After the draft stage, key, experiment_type, variants, correction_method and confidence_level are fixed (400 even when the stored value is re-sent); status changes only through the lifecycle routes (409). A duplicate key is 409.',
      params: ExperimentParams, body: ExperimentUpdate,
      response: { 200: ExperimentView, ...errorResponses(400, 401, 403, 404, 409, 422, 501) },
    },
  }, (req) => experiments.update(actorOf(req), req.params.experiment_id, req.body));

  app.delete('/:experiment_id', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'deleteExperiment', summary: 'Delete a draft experiment',
      description: 'ADMIN and DEVELOPER. Only draft experiments can be deleted (any other status is 409); unknown id 404. The deletion is audit-logged.',
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
      description: 'ADMIN and DEVELOPER. Stores the planned start_date and end_date; an end not after the start is 422, a completed or archived experiment 409, and start_date is fixed once the experiment has started (400). The scheduler starts a draft when its start_date arrives and completes an active experiment at its end_date.',
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
  const transitionDescriptions: Record<(typeof transitions)[number][0], string> = {
    start: 'ADMIN and DEVELOPER. Starts a draft (start_date becomes now unless a scheduled start has already passed) or resumes a paused experiment, so users can be assigned. A scheduled end_date that has passed, or any other status, is 409.',
    pause: 'ADMIN and DEVELOPER. Pauses an active experiment: no new assignments until it is started again. Any other status is 409.',
    complete: 'ADMIN and DEVELOPER. Ends an active or paused experiment now and sets end_date; any other status is 409.',
    archive: 'ADMIN and DEVELOPER. Archives a draft, paused or completed experiment, keeping its data; an active or archived experiment is 409.',
  };
  for (const [name, operationId, summary] of transitions) {
    app.post(`/:experiment_id/${name}`, {
      config: { access: CHANGE },
      schema: {
        tags, operationId, summary,
        description: transitionDescriptions[name],
        params: ExperimentParams,
        response: { 200: ExperimentView, ...errorResponses(401, 403, 404, 409, 422) },
      },
    }, (req) => experiments[name](actorOf(req), req.params.experiment_id));
  }

  app.post('/:experiment_id/clone', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'cloneExperiment', summary: 'Copy an experiment into a new draft with a new key',
      description: "ADMIN and DEVELOPER. Copies variants, metrics (with expected_effect), targeting rules and statistical settings into a new draft named '<name> (copy)' with a free key; assignments and events are not copied. Rules naming an unknown, inactive or archived segment are 409.",
      params: ExperimentParams,
      response: { 201: ExperimentView, ...errorResponses(401, 403, 404, 409, 422, 501) },
    },
  }, async (req, reply) => reply.code(201).send(await experiments.clone(actorOf(req), req.params.experiment_id)));

  app.post('/:experiment_id/metadata', {
    config: { access: CHANGE },
    schema: {
      tags, operationId: 'annotateExperiment', summary: 'Store annotations on an experiment (merged; null removes a key)',
      description: "ADMIN and DEVELOPER. Merges the sent keys into the experiment's metadata: a key sent as null is removed, keys not sent are kept. Status and statistics do not change; the change is audit-logged with the key names.",
      params: ExperimentParams, body: ExperimentMetadata,
      response: { 200: ExperimentView, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => experiments.annotate(actorOf(req), req.params.experiment_id, req.body));
};
