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
      body: ApiKeyCreate,
      response: { 201: ApiKeyCreated, ...errorResponses(401, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await apiKeys.create(actorOf(req), req.body)));

  app.get('', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listApiKeys', summary: "The caller's keys; all=true lists everyone's (ADMIN)",
      querystring: ApiKeyListQuery,
      response: { 200: Type.Array(ApiKeyView), ...errorResponses(401, 403, 422) },
    },
  }, (req) => apiKeys.list(actorOf(req), req.query.all));

  app.delete('/:key_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'deleteApiKey', summary: "Delete a key (own keys; ADMIN for others')",
      params: ApiKeyParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await apiKeys.delete(actorOf(req), req.params.key_id);
    return reply.code(204).send(null);
  });
};
