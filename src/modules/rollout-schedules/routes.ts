import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  ScheduleCreate, ScheduleList, ScheduleListQuery, ScheduleParams, ScheduleUpdate, ScheduleView, StageInput, StageParams, StageUpdate,
} from './schemas.js';
import type { RolloutSchedulesService } from './service.js';

const tags = ['rollout-schedules'];
/** Schedules change flags, so they follow the flag permissions: ADMIN and DEVELOPER change, every role reads. */
const editors = () => role('ADMIN', 'DEVELOPER');
const changeErrors = errorResponses(401, 403, 404, 409, 422);
const deleted = Type.Null({ description: 'Deleted' });

export const rolloutSchedulesRoutes: FastifyPluginAsyncTypebox<{ schedules: RolloutSchedulesService }> = async (app, { schedules }) => {
  app.post('/', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'createRolloutSchedule', summary: 'Create a draft rollout schedule for a flag, with its stages (ADMIN, DEVELOPER)',
      body: ScheduleCreate, response: { 201: ScheduleView, ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await schedules.create(actorOf(req), req.body)));

  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listRolloutSchedules', summary: 'List rollout schedules, newest first (every role)',
      querystring: ScheduleListQuery, response: { 200: ScheduleList, ...errorResponses(401, 422) },
    },
  }, (req) => schedules.list(req.query));

  app.get('/:schedule_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readRolloutSchedule', summary: 'A rollout schedule with its stages', params: ScheduleParams,
      response: { 200: ScheduleView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => schedules.get(req.params.schedule_id));

  app.put('/:schedule_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateRolloutSchedule', summary: 'Change name or description (not once completed or cancelled)',
      params: ScheduleParams, body: ScheduleUpdate, response: { 200: ScheduleView, ...changeErrors },
    },
  }, (req) => schedules.update(actorOf(req), req.params.schedule_id, req.body));

  app.delete('/:schedule_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'deleteRolloutSchedule', summary: 'Delete a schedule that is not active',
      params: ScheduleParams, response: { 204: deleted, ...changeErrors },
    },
  }, async (req, reply) => {
    await schedules.delete(actorOf(req), req.params.schedule_id);
    return reply.code(204).send(null);
  });

  const transitions = [
    ['activate', 'activateRolloutSchedule', 'Start (or resume) a draft or paused schedule; it needs a pending stage'],
    ['pause', 'pauseRolloutSchedule', 'Pause an active schedule: no stage is applied until it is activated again'],
    ['cancel', 'cancelRolloutSchedule', 'Cancel a schedule that has not completed (final)'],
  ] as const;
  for (const [action, operationId, summary] of transitions) {
    app.post(`/:schedule_id/${action}`, {
      config: { access: editors() },
      schema: { tags, operationId, summary, params: ScheduleParams, response: { 200: ScheduleView, ...changeErrors } },
    }, (req) => schedules[action](actorOf(req), req.params.schedule_id));
  }

  app.post('/:schedule_id/stages', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'addRolloutStage', summary: 'Add a stage after the last one',
      params: ScheduleParams, body: StageInput, response: { 201: ScheduleView, ...changeErrors },
    },
  }, async (req, reply) => reply.code(201).send(await schedules.addStage(actorOf(req), req.params.schedule_id, req.body)));

  app.put('/stages/:stage_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateRolloutStage', summary: 'Change a pending stage (scheduled_at null makes it manual)',
      params: StageParams, body: StageUpdate, response: { 200: ScheduleView, ...changeErrors },
    },
  }, (req) => schedules.updateStage(actorOf(req), req.params.stage_id, req.body));

  app.delete('/stages/:stage_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'deleteRolloutStage', summary: 'Delete a pending stage',
      params: StageParams, response: { 204: deleted, ...changeErrors },
    },
  }, async (req, reply) => {
    await schedules.deleteStage(actorOf(req), req.params.stage_id);
    return reply.code(204).send(null);
  });

  app.post('/stages/:stage_id/advance', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'advanceRolloutStage', summary: "Apply the next pending stage now: sets the flag's rollout percentage (a guarded schedule tests its guardrails first; a degradation rolls back instead, 409)",
      params: StageParams, response: { 200: ScheduleView, ...changeErrors },
    },
  }, (req) => schedules.advanceStage(actorOf(req), req.params.stage_id));
};
