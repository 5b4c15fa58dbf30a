import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { beta } from '../../platform/openapi.js';
import { errorResponses, Nullable } from '../../platform/schemas.js';
import { HoldoutCheck, HoldoutCreate, HoldoutParams, HoldoutResults, HoldoutUpdate, HoldoutUserParams, HoldoutView } from './schemas.js';
import type { HoldoutService } from './service.js';

const tags = ['holdout'];

export const holdoutRoutes: FastifyPluginAsyncTypebox<{ holdout: HoldoutService }> = async (app, { holdout }) => {
  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readActiveHoldout', summary: 'The active global holdout, or null',
      description: 'Any signed-in role. The global holdout that is currently active, or null. Users in it get the control variant of every experiment with reason holdout.',
      response: { 200: Nullable(HoldoutView), ...errorResponses(401) },
    },
  }, () => holdout.active());

  app.get('/all', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'listHoldouts', summary: 'Every holdout, newest first (ADMIN)',
      description: 'ADMIN only. Every holdout, active or not, newest first.',
      response: { 200: Type.Array(HoldoutView), ...errorResponses(401, 403) },
    },
  }, () => holdout.list());

  app.post('', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'createHoldout', summary: 'Create a holdout; only one may be active (ADMIN)',
      description: 'ADMIN only. Creates a global holdout: the percentage of users kept out of every experiment (they get the control with reason holdout). It is active unless is_active false is sent, and only one may be active: another active holdout gives 409.',
      body: HoldoutCreate,
      response: { 201: HoldoutView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await holdout.create(actorOf(req), req.body)));

  app.put('/:holdout_id', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'updateHoldout', summary: 'Change a holdout (ADMIN)',
      description: 'ADMIN only. Changes name, description, percentage or is_active; activating it while another holdout is active is 409. Unknown id is 404.',
      params: HoldoutParams, body: HoldoutUpdate,
      response: { 200: HoldoutView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => holdout.update(actorOf(req), req.params.holdout_id, req.body));

  app.get('/check/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'checkHoldout', summary: 'Whether a user is in the active holdout (deterministic by hash)',
      description: 'Any signed-in role. Whether the user id falls in the active holdout; the answer is a deterministic hash of the user id, so it is the same on every call and server.',
      params: HoldoutUserParams,
      response: { 200: HoldoutCheck, ...errorResponses(401, 422) },
    },
  }, (req) => holdout.check(req.params.user_id));

  app.get('/:holdout_id/results', {
    config: { access: signedIn() },
    schema: {
      ...beta,
      tags, operationId: 'readHoldoutResults', summary: 'Holdout comparison (beta)',
      description: 'Any signed-in role. Beta: per event name, how many held-out users and how many users exposed to experiments sent it; the numbers carry an analysis notice. Unknown id is 404.',
      params: HoldoutParams,
      response: { 200: HoldoutResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => holdout.results(req.params.holdout_id));
};
