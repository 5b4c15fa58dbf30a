import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { EnvironmentCreate, EnvironmentParams, EnvironmentUpdate, EnvironmentView } from './schemas.js';
import type { EnvironmentsService } from './service.js';

const tags = ['environments'];
/** ADMIN (and superusers, who pass every role check) write; every signed-in role reads. */
const admins = () => role('ADMIN');

export const environmentsRoutes: FastifyPluginAsyncTypebox<{ environments: EnvironmentsService }> = async (app, { environments }) => {
  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listEnvironments', summary: 'Every environment, by sort_order then key',
      description: 'Every signed-in role. The environments (at most 20); exactly one is the default, which the flag routes act on unless told otherwise.',
      response: { 200: Type.Array(EnvironmentView), ...errorResponses(401) },
    },
  }, () => environments.list());

  app.post('', {
    config: { access: admins() },
    schema: {
      tags, operationId: 'createEnvironment', summary: 'Create an environment (every flag off, or copied from copy_from)',
      description: "ADMIN. key is 1 to 64 of a-z, 0-9, - and _, and never changes. Every flag starts off in the new environment, or with each flag's state copied from copy_from (unknown: 422). is_default true moves the default here. A taken key, or a 21st environment, is 409.",
      body: EnvironmentCreate,
      response: { 201: EnvironmentView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await environments.create(actorOf(req), req.body)));

  app.get('/:key', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readEnvironment', summary: 'An environment',
      description: 'Every signed-in role. Unknown key is 404.',
      params: EnvironmentParams,
      response: { 200: EnvironmentView, ...errorResponses(401, 404, 422) },
    },
  }, (req) => environments.get(req.params.key));

  app.patch('/:key', {
    config: { access: admins() },
    schema: {
      tags, operationId: 'updateEnvironment', summary: 'Change the fields sent; is_default true moves the default here',
      description: 'ADMIN. Only the sent fields change; the key never does (sending it is 422). is_default true makes this the default and the previous default stops being it, in one transaction; is_default false on the default is 409 (make another the default instead).',
      params: EnvironmentParams, body: EnvironmentUpdate,
      response: { 200: EnvironmentView, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, (req) => environments.update(actorOf(req), req.params.key, req.body));

  app.delete('/:key', {
    config: { access: admins() },
    schema: {
      tags, operationId: 'deleteEnvironment', summary: "Delete an environment with every flag's state in it",
      description: 'ADMIN. Deleting the default environment, or one that API keys still belong to, is 409 with a message that says which. Unknown key is 404.',
      params: EnvironmentParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (req, reply) => {
    await environments.delete(actorOf(req), req.params.key);
    return reply.code(204).send(null);
  });
};
