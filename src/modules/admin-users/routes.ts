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
      description: 'Superusers only (an ADMIN without the superuser flag gets 403). Lists accounts newest first; search matches part of the username, email or full name in any letter case; paged with skip and limit.',
      querystring: AdminUserListQuery,
      response: { 200: AdminUserList, ...errorResponses(401, 403, 422) },
    },
  }, (req) => users.adminList(req.query.search, req.query.skip, req.query.limit));

  app.patch('/:user_id', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminPatchUser', summary: 'Change any subset of an account, including its role',
      description: 'Superusers only. Changes only the fields sent, including role. A role change is 409 while SYNC_ROLES_ON_LOGIN is on; a duplicate email or username is 409. Changes of is_superuser and is_active are audit-logged in the same transaction.',
      params: UserIdParams, body: UserPatch,
      response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409, 422, 500) },
    },
  }, (req) => users.adminUpdate(actorOf(req), req.params.user_id, req.body));

  app.put('/:user_id', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminReplaceUser', summary: 'Update an account; password as for PUT /users/{user_id}',
      description: "Superusers only. username and email are required; full_name, is_active, is_superuser and password are optional, and a password sent here resets another account's password (your own: use POST /api/v1/users/me/password). A duplicate email or username is 409.",
      params: UserIdParams, body: UserReplace,
      response: { 200: UserView, ...errorResponses(400, 401, 403, 404, 409, 422, 500) },
    },
  }, (req) => users.adminUpdate(actorOf(req), req.params.user_id, req.body));

  app.delete('/:user_id', {
    config: { access: superuserOnly() },
    schema: {
      tags, operationId: 'adminDeleteUser', summary: 'Delete an account', params: UserIdParams,
      description: 'Superusers only. Deletes the account and its API keys; its segments and rollout schedules are kept with owner_id null. A superuser cannot delete themselves (400); an unknown id is 404.',
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 422, 500) },
    },
  }, async (req, reply) => {
    await users.delete(actorOf(req), req.params.user_id, { adminRoute: true });
    return reply.code(204).send(null);
  });
};
