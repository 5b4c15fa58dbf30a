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
      response: { 200: Nullable(HoldoutView), ...errorResponses(401) },
    },
  }, () => holdout.active());

  app.get('/all', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'listHoldouts', summary: 'Every holdout, newest first (ADMIN)',
      response: { 200: Type.Array(HoldoutView), ...errorResponses(401, 403) },
    },
  }, () => holdout.list());

  app.post('', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'createHoldout', summary: 'Create a holdout; only one may be active (ADMIN)',
      body: HoldoutCreate,
      response: { 201: HoldoutView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await holdout.create(actorOf(req), req.body)));

  app.put('/:holdout_id', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'updateHoldout', summary: 'Change a holdout (ADMIN)',
      params: HoldoutParams, body: HoldoutUpdate,
      response: { 200: HoldoutView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => holdout.update(actorOf(req), req.params.holdout_id, req.body));

  app.get('/check/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'checkHoldout', summary: 'Whether a user is in the active holdout (deterministic by hash)',
      params: HoldoutUserParams,
      response: { 200: HoldoutCheck, ...errorResponses(401, 422) },
    },
  }, (req) => holdout.check(req.params.user_id));

  app.get('/:holdout_id/results', {
    config: { access: signedIn() },
    schema: {
      ...beta,
      tags, operationId: 'readHoldoutResults', summary: 'Holdout comparison (beta)',
      params: HoldoutParams,
      response: { 200: HoldoutResults, ...errorResponses(401, 404, 422) },
    },
  }, (req) => holdout.results(req.params.holdout_id));
};
