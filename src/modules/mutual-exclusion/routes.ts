import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { GroupCreate, GroupListQuery, GroupMemberAdd, GroupMemberParams, GroupParams, GroupUpdate, GroupView } from './schemas.js';
import type { MutualExclusionService } from './service.js';

const tags = ['mutual-exclusion-groups'];

export const mutualExclusionRoutes: FastifyPluginAsyncTypebox<{ groups: MutualExclusionService }> = async (app, { groups }) => {
  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listMutualExclusionGroups', summary: 'List mutual exclusion groups',
      querystring: GroupListQuery,
      response: { 200: Type.Array(GroupView), ...errorResponses(401, 422) },
    },
  }, (req) => groups.list(req.query.status));

  app.post('', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'createMutualExclusionGroup', summary: 'Create an active group (DEVELOPER and up)',
      body: GroupCreate,
      response: { 201: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await groups.create(actorOf(req), req.body)));

  app.get('/:group_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readMutualExclusionGroup', summary: 'A mutual exclusion group with its experiments', params: GroupParams,
      response: { 200: GroupView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => groups.get(req.params.group_id));

  app.put('/:group_id', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'updateMutualExclusionGroup',
      summary: 'Edit name, description, traffic allocation (DEVELOPER and up) or status (ADMIN)',
      params: GroupParams, body: GroupUpdate,
      response: { 200: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => groups.update(actorOf(req), req.params.group_id, req.body));

  app.delete('/:group_id', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'archiveMutualExclusionGroup', summary: 'Archive a group (ADMIN or superuser)',
      params: GroupParams,
      response: { 204: Type.Null({ description: 'Archived' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await groups.archive(actorOf(req), req.params.group_id);
    return reply.code(204).send(null);
  });

  app.post('/:group_id/experiments', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'addMutualExclusionGroupExperiment',
      summary: 'Add an experiment (one active group per experiment)',
      params: GroupParams, body: GroupMemberAdd,
      response: { 200: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => groups.addExperiment(actorOf(req), req.params.group_id, req.body.experiment_id));

  app.delete('/:group_id/experiments/:experiment_id', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'removeMutualExclusionGroupExperiment', summary: 'Remove an experiment from a group',
      params: GroupMemberParams,
      response: { 200: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => groups.removeExperiment(actorOf(req), req.params.group_id, req.params.experiment_id));
};
