import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, signedIn, superuserOnly } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { PasswordChange, UserCreate, UserIdParams, UserListQuery, UserReplace, UserView } from './schemas.js';
import type { UsersService } from './service.js';

const tags = ['users'];

export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService; localProvider: boolean }> = async (
  app,
  { users, localProvider },
) => {
  app.get('/', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listUsers', summary: 'List accounts (superusers see all, others only themselves)',
      querystring: UserListQuery,
      response: { 200: Type.Array(UserView), ...errorResponses(401, 422) },
    },
  }, (req) => users.list(actorOf(req), req.query.skip, req.query.limit));

  app.post('/', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'createUser', summary: 'Create an account (VIEWER role)',
      body: UserCreate,
      response: { 201: UserView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await users.create(actorOf(req), req.body)));

  app.get('/me', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readOwnUser', summary: "The caller's account", response: { 200: UserView, ...errorResponses(401) } },
  }, (req) => users.get(actorOf(req).id));

  // Local provider only: under an identity provider the route does not exist (404 before body validation).
  if (localProvider) {
    app.post('/me/password', {
      config: { access: signedIn() },
      schema: {
        tags, operationId: 'changeOwnPassword', summary: 'Change the own password (other sessions stay valid)',
        body: PasswordChange,
        response: { 204: Type.Null({ description: 'Password changed' }), ...errorResponses(401, 403, 422, 429) },
      },
    }, async (req, reply) => {
      await users.changeOwnPassword(actorOf(req), req.body.current_password, req.body.new_password);
      return reply.code(204).send(null);
    });
  }

  app.get('/:user_id', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readUser', summary: 'An account', params: UserIdParams, response: { 200: UserView, ...errorResponses(401, 404, 422) } },
  }, (req) => users.get(req.params.user_id));

  app.put('/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'replaceUser', summary: 'Update an account (superusers any; others only their own)',
      params: UserIdParams, body: UserReplace,
      response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409, 422, 500) },
    },
  }, (req) => users.replace(actorOf(req), req.params.user_id, req.body));

  app.delete('/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'deleteUser', summary: 'Delete an account (superusers any but themselves; others only themselves)',
      params: UserIdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 422, 500) },
    },
  }, async (req, reply) => {
    await users.delete(actorOf(req), req.params.user_id, { adminRoute: false });
    return reply.code(204).send(null);
  });
};
