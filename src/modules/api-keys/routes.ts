import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { ApiKeyCreate, ApiKeyCreated, ApiKeyListQuery, ApiKeyParams, ApiKeyView } from './schemas.js';
import type { ApiKeysService } from './service.js';

const tags = ['api-keys'];

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeysService }> = async (app, { apiKeys }) => {
  app.post('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'createApiKey', summary: 'Create an API key (any role); the full key is returned only here',
      description: 'Any signed-in role may create a key. The response carries the full key exactly once; store it then. A key writes tracking data (assignments, events) and evaluates flags; scopes such as sdk:ruleset unlock the batch assignment and the ruleset download.',
      body: ApiKeyCreate,
      response: { 201: ApiKeyCreated, ...errorResponses(401, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await apiKeys.create(actorOf(req), req.body)));

  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listApiKeys', summary: "The caller's keys; all=true lists everyone's (ADMIN)",
      description: "Any signed-in role sees their own keys. all=true lists every account's keys and needs the ADMIN role (others get 403). The full key value is never shown again after creation.",
      querystring: ApiKeyListQuery,
      response: { 200: Type.Array(ApiKeyView), ...errorResponses(401, 403, 422) },
    },
  }, (req) => apiKeys.list(actorOf(req), req.query.all));

  app.delete('/:key_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'deleteApiKey', summary: "Delete a key (own keys; ADMIN for others')",
      description: "Deletes one API key: your own, or anyone's with the ADMIN role (403 otherwise). An unknown id is 404.",
      params: ApiKeyParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await apiKeys.delete(actorOf(req), req.params.key_id);
    return reply.code(204).send(null);
  });
};
