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
      description: 'Any signed-in role. Groups of experiments that never share a user, each with its experiments and traffic allocation, optionally filtered by status.',
      querystring: GroupListQuery,
      response: { 200: Type.Array(GroupView), ...errorResponses(401, 422) },
    },
  }, (req) => groups.list(req.query.status));

  app.post('', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'createMutualExclusionGroup', summary: 'Create an active group (DEVELOPER and up)',
      description: 'ADMIN and DEVELOPER. Creates an active group, optionally with up to 100 draft, active or paused experiments and a traffic allocation (at most 100 in total, naming only member experiments, else 422). An experiment already in another active group is 409; an unknown experiment 404.',
      body: GroupCreate,
      response: { 201: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await groups.create(actorOf(req), req.body)));

  app.get('/:group_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readMutualExclusionGroup', summary: 'A mutual exclusion group with its experiments', params: GroupParams,
      description: 'Any signed-in role. The group with its experiments and traffic allocation. Unknown id is 404.',
      response: { 200: GroupView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => groups.get(req.params.group_id));

  app.put('/:group_id', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'updateMutualExclusionGroup',
      summary: 'Edit name, description, traffic allocation (DEVELOPER and up) or status (ADMIN)',
      description: 'DEVELOPER and ADMIN may change name, description and traffic allocation; changing status needs ADMIN (403 otherwise). An archived group cannot change (409).',
      params: GroupParams, body: GroupUpdate,
      response: { 200: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => groups.update(actorOf(req), req.params.group_id, req.body));

  app.delete('/:group_id', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'archiveMutualExclusionGroup', summary: 'Archive a group (ADMIN or superuser)',
      description: 'ADMIN (or superuser). Archives the group, which then cannot change; archiving an archived group changes nothing. Unknown id is 404.',
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
      description: 'ADMIN and DEVELOPER. Adds a draft, active or paused experiment to the group. An experiment belongs to at most one active group, and an archived group cannot change: both are 409.',
      params: GroupParams, body: GroupMemberAdd,
      response: { 200: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => groups.addExperiment(actorOf(req), req.params.group_id, req.body.experiment_id));

  app.delete('/:group_id/experiments/:experiment_id', {
    config: { access: role('ADMIN', 'DEVELOPER') },
    schema: {
      tags, operationId: 'removeMutualExclusionGroupExperiment', summary: 'Remove an experiment from a group',
      description: 'ADMIN and DEVELOPER. Removes the experiment from the group; one that is not in the group is 404, an archived group 409.',
      params: GroupMemberParams,
      response: { 200: GroupView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => groups.removeExperiment(actorOf(req), req.params.group_id, req.params.experiment_id));
};
