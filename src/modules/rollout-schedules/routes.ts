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
      description: 'ADMIN and DEVELOPER. Creates a draft schedule for a flag with stages in the order they run, each a rollout percentage and an optional future scheduled_at (none makes it manual); a time in the past or before an earlier stage is 422. Unknown flag is 404.',
      body: ScheduleCreate, response: { 201: ScheduleView, ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await schedules.create(actorOf(req), req.body)));

  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listRolloutSchedules', summary: 'List rollout schedules, newest first (every role)',
      description: 'Every signed-in role. Rollout schedules newest first with their stages, optionally filtered by flag_id and status; total counts all matches.',
      querystring: ScheduleListQuery, response: { 200: ScheduleList, ...errorResponses(401, 422) },
    },
  }, (req) => schedules.list(req.query));

  app.get('/:schedule_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readRolloutSchedule', summary: 'A rollout schedule with its stages', params: ScheduleParams,
      description: 'Every signed-in role. The schedule with its stages and their state. Unknown id is 404.',
      response: { 200: ScheduleView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => schedules.get(req.params.schedule_id));

  app.put('/:schedule_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateRolloutSchedule', summary: 'Change name or description (not once completed or cancelled)',
      description: 'ADMIN and DEVELOPER. Changes name or description; a completed or cancelled schedule cannot change (409).',
      params: ScheduleParams, body: ScheduleUpdate, response: { 200: ScheduleView, ...changeErrors },
    },
  }, (req) => schedules.update(actorOf(req), req.params.schedule_id, req.body));

  app.delete('/:schedule_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'deleteRolloutSchedule', summary: 'Delete a schedule that is not active',
      description: 'ADMIN and DEVELOPER. Deletes a schedule and its stages unless it is active (409: pause or cancel it first).',
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
  const transitionDescriptions: Record<(typeof transitions)[number][0], string> = {
    activate: 'ADMIN and DEVELOPER. Starts a draft or resumes a paused schedule; its stages are then applied at their times. It needs a pending stage, and only one schedule per flag can be active (409 otherwise).',
    pause: 'ADMIN and DEVELOPER. Pauses an active schedule; no stage is applied until it is activated again. Any other status is 409.',
    cancel: 'ADMIN and DEVELOPER. Cancels the schedule for good; no further stage is applied and the flag keeps its current rollout percentage. A completed or cancelled schedule is 409.',
  };
  for (const [action, operationId, summary] of transitions) {
    app.post(`/:schedule_id/${action}`, {
      config: { access: editors() },
      schema: { tags, operationId, summary, description: transitionDescriptions[action], params: ScheduleParams, response: { 200: ScheduleView, ...changeErrors } },
    }, (req) => schedules[action](actorOf(req), req.params.schedule_id));
  }

  app.post('/:schedule_id/stages', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'addRolloutStage', summary: 'Add a stage after the last one',
      description: 'ADMIN and DEVELOPER. Appends a stage after the last one; its time must not be before earlier stages. A completed or cancelled schedule is 409.',
      params: ScheduleParams, body: StageInput, response: { 201: ScheduleView, ...changeErrors },
    },
  }, async (req, reply) => reply.code(201).send(await schedules.addStage(actorOf(req), req.params.schedule_id, req.body)));

  app.put('/stages/:stage_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'updateRolloutStage', summary: 'Change a pending stage (scheduled_at null makes it manual)',
      description: 'ADMIN and DEVELOPER. Changes a pending stage; an applied stage is 409 and scheduled_at must be in the future. scheduled_at null makes it a manual stage.',
      params: StageParams, body: StageUpdate, response: { 200: ScheduleView, ...changeErrors },
    },
  }, (req) => schedules.updateStage(actorOf(req), req.params.stage_id, req.body));

  app.delete('/stages/:stage_id', {
    config: { access: editors() },
    schema: {
      tags, operationId: 'deleteRolloutStage', summary: 'Delete a pending stage',
      description: 'ADMIN and DEVELOPER. Deletes a stage that has not been applied; an active or paused schedule keeps at least one pending stage (409).',
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
      description: "ADMIN and DEVELOPER. Applies the next pending stage of an active schedule now, setting the flag's rollout percentage; any other stage, or a schedule that is not active, is 409. A schedule with guardrails first tests them against the pre-stage baseline (mSPRT): a degradation lowers the rollout to its rollback percentage, pauses the schedule, records the decision and answers 409.",
      params: StageParams, response: { 200: ScheduleView, ...changeErrors },
    },
  }, (req) => schedules.advanceStage(actorOf(req), req.params.stage_id));
};
