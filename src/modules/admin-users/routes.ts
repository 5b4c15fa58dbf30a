import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, superuserOnly } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import { AdminUserList, AdminUserListQuery, UserIdParams, UserPatch, UserReplace, UserView } from '../users/schemas.js';
import type { UsersService } from '../users/service.js';

const tags = ['admin-users'];

/** /api/v1/admin/users: every route needs is_superuser (an ADMIN without it gets 403). */
export const adminUsersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  app.get('', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminListUsers', summary: 'Accounts, newest first',
      querystring: AdminUserListQuery,
      response: { 200: AdminUserList, ...errorResponses(401, 403, 422) },
    },
  }, (req) => users.adminList(req.query.search, req.query.skip, req.query.limit));

  app.patch('/:user_id', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminPatchUser', summary: 'Change any subset of an account, including its role',
      params: UserIdParams, body: UserPatch,
      response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409, 422, 500) },
    },
  }, (req) => users.adminUpdate(actorOf(req), req.params.user_id, req.body));

  app.put('/:user_id', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminReplaceUser', summary: 'Update an account; password as for PUT /users/{user_id}',
      params: UserIdParams, body: UserReplace,
      response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409, 422, 500) },
    },
  }, (req) => users.adminUpdate(actorOf(req), req.params.user_id, req.body));

  app.delete('/:user_id', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminDeleteUser', summary: 'Delete an account', params: UserIdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 422, 500) },
    },
  }, async (req, reply) => {
    await users.delete(actorOf(req), req.params.user_id, { adminRoute: true });
    return reply.code(204).send(null);
  });
};
