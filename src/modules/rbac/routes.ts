import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, role, signedIn } from '../../platform/auth.js';
import { errorResponses } from '../../platform/schemas.js';
import {
  AssignResult,
  EffectivePermissions,
  GrantCreate,
  GrantParams,
  GrantResult,
  GrantRevokeResult,
  RevokeResult,
  RoleAssignment,
  RoleCreate,
  RoleListQuery,
  RoleParams,
  RoleUpdate,
  RoleView,
  UserParams,
} from './schemas.js';
import type { RbacService } from './service.js';

const tags = ['rbac'];

/**
 * /api/v1/rbac: custom roles and direct grants, stored and displayed only. Every guard below is a base-role guard;
 * nothing in this module feeds an access decision anywhere.
 */
export const rbacRoutes: FastifyPluginAsyncTypebox<{ rbac: RbacService }> = async (app, { rbac }) => {
  app.get('/roles', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'listCustomRoles', summary: 'Custom roles by name',
      description: 'Any signed-in role. Custom roles with their permissions and user counts; include_system=false leaves out system roles. Custom roles are stored and shown but do not change what a user may do.',
      querystring: RoleListQuery,
      response: { 200: Type.Array(RoleView), ...errorResponses(401, 422) },
    },
  }, (req) => rbac.list(req.query.include_system));

  app.post('/roles', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'createCustomRole', summary: 'Create a custom role', body: RoleCreate,
      description: 'ADMIN only. name: 2 to 64 characters, a lower-case letter first, then a-z, 0-9, - or _; each permission names a resource and at least one action. A duplicate name is 409.',
      response: { 201: RoleView, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await rbac.create(actorOf(req), req.body)));

  app.post('/roles/assign', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'assignCustomRole', summary: 'Assign a custom role to a user (idempotent)',
      description: 'ADMIN only. Gives the role to the user; assigning it again changes nothing. Unknown user or role is 404.',
      body: RoleAssignment,
      response: { 200: AssignResult, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => rbac.assign(actorOf(req), req.body));

  app.post('/roles/revoke', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'revokeCustomRole', summary: 'Take a custom role from a user (404 when not assigned)',
      description: 'ADMIN only. Takes the role from the user; a role the user does not have is 404.',
      body: RoleAssignment,
      response: { 200: RevokeResult, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => rbac.revoke(actorOf(req), req.body));

  app.get('/roles/:role_name', {
    config: { access: signedIn() },
    schema: { tags, operationId: 'readCustomRole', summary: 'A custom role and its permissions', description: 'Any signed-in role. The role with its permissions; unknown name is 404.', params: RoleParams, response: { 200: RoleView, ...errorResponses(401, 404, 422) } },
  }, (req) => rbac.get(req.params.role_name));

  app.put('/roles/:role_name', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'updateCustomRole', summary: 'Change description and/or permissions (system roles: 400)',
      description: 'ADMIN only. Changes description and/or permissions; system roles cannot be changed (400). Unknown name is 404.',
      params: RoleParams, body: RoleUpdate,
      response: { 200: RoleView, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, (req) => rbac.update(actorOf(req), req.params.role_name, req.body));

  app.delete('/roles/:role_name', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'deleteCustomRole', summary: 'Delete a role and its assignments (system roles: 400)',
      description: 'ADMIN only. Deletes the role and all its assignments; system roles cannot be deleted (400).',
      params: RoleParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, async (req, reply) => {
    await rbac.delete(actorOf(req), req.params.role_name);
    return reply.code(204).send(null);
  });

  app.get('/users/:user_id/permissions', {
    config: { access: signedIn() },
    schema: {
      tags, operationId: 'readEffectivePermissions', summary: 'Base role, custom roles and valid grants, united (self, or ADMIN)',
      description: "Your own, or any user's with ADMIN (403 otherwise); unknown user 404. Base role permissions united with custom roles and valid direct grants; shown for information only, routes enforce the base role.",
      params: UserParams,
      response: { 200: EffectivePermissions, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => rbac.effectivePermissions(actorOf(req), req.params.user_id));

  app.post('/users/:user_id/grant', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'grantPermission', summary: 'Grant actions on a resource directly, optionally until expires_at',
      description: 'ADMIN only. Grants actions on a resource directly to the user, until expires_at or without end; a grant is shown in effective permissions while active and unexpired.',
      params: UserParams, body: GrantCreate,
      response: { 201: GrantResult, ...errorResponses(400, 401, 403, 404, 422) },
    },
  }, async (req, reply) => reply.code(201).send(await rbac.grant(actorOf(req), req.params.user_id, req.body)));

  app.delete('/users/:user_id/grant/:resource', {
    config: { access: role('ADMIN') },
    schema: {
      tags, operationId: 'revokePermissionGrants', summary: "Delete all of the user's grants for the resource",
      description: 'ADMIN only. Deletes every direct grant of the user for that resource and answers the number deleted.',
      params: GrantParams,
      response: { 200: GrantRevokeResult, ...errorResponses(401, 403, 404, 422) },
    },
  }, (req) => rbac.revokeGrants(actorOf(req), req.params.user_id, req.params.resource));
};
