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
      description: 'Superusers see every account; other roles get a list with only their own. Paged with skip and limit (default 100, at most 100).',
      querystring: UserListQuery,
      response: { 200: Type.Array(UserView), ...errorResponses(401, 422) },
    },
  }, (req) => users.list(actorOf(req), req.query.skip, req.query.limit));

  app.post('/', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'createUser', summary: 'Create an account (VIEWER role)',
      description: 'Superusers only. Creates an account with the VIEWER role. Passwords need 8 characters to 72 bytes with upper case, lower case and a digit (422); a duplicate email (any letter case) or username is 409.',
      body: UserCreate,
      response: { 201: UserView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await users.create(actorOf(req), req.body)));

  app.get('/me', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readOwnUser', summary: "The caller's account", description: "Any signed-in caller. The caller's own account; a refused sign-in is 401.", response: { 200: UserView, ...errorResponses(401) } },
  }, (req) => users.get(actorOf(req).id));

  // Local provider only: under an identity provider the route does not exist (404 before body validation).
  if (localProvider) {
    app.post('/me/password', {
      config: { access: signedIn() },
      schema: {
        tags, operationId: 'changeOwnPassword', summary: 'Change the own password (other sessions stay valid)',
        description: 'Local provider only (404 otherwise). current_password must match (403 otherwise); the new password follows the password rule. Other sessions stay valid. Limited to 5 calls a minute.',
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
    schema: { tags, operationId: 'readUser', summary: 'An account', description: 'Any signed-in role. One account by id; unknown id is 404.', params: UserIdParams, response: { 200: UserView, ...errorResponses(401, 404, 422) } },
  }, (req) => users.get(req.params.user_id));

  app.put('/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'replaceUser', summary: 'Update an account (superusers any; others only their own)',
      description: 'Superusers change any account; others only their own, sending their current username and email (a different value is 403). Setting your own password here is 403: use POST /api/v1/users/me/password. Duplicate email or username is 409.',
      params: UserIdParams, body: UserReplace,
      response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409, 422, 500) },
    },
  }, (req) => users.replace(actorOf(req), req.params.user_id, req.body));

  app.delete('/:user_id', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'deleteUser', summary: 'Delete an account (superusers any but themselves; others only themselves)',
      description: "Superusers delete any account but their own (400); others only their own (403 otherwise). The account's API keys go; its segments and rollout schedules stay with owner_id null.",
      params: UserIdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 422, 500) },
    },
  }, async (req, reply) => {
    await users.delete(actorOf(req), req.params.user_id, { adminRoute: false });
    return reply.code(204).send(null);
  });
};
